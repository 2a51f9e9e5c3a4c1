#include "model/arm_plan.hpp"

#include <string.h>  // memmem (GNU)

#include <functional>
#include <string_view>

#include "system/error.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

// A byte range of plan.json.
struct Span {
  std::size_t begin = 0, end = 0;
  std::string_view of(std::string_view text) const { return text.substr(begin, end - begin); }
};

// write_plan lays plan.json out as json::dump(2) does: a key of the top-level object starts its
// line after two spaces, an element of a top-level array after four and a field of that element
// after six; a string never holds a raw line break. So these lines can be found by their text
// alone, and the text of a line at one depth never occurs at another.
constexpr std::string_view kElementStart = "\n    {";
constexpr std::string_view kElementEnd = "\n    }";
// The end of a top-level array of objects: its last element's "}" line, then its own "]" line.
// Searched for whole: "\n  ]" alone starts like every line of the array, and memmem tried each
// of them (a third of a worker's plan read at 50,000 shapes, perf).
constexpr std::string_view kObjectArrayEnd = "\n    }\n  ]";

// The first occurrence of `needle` in `hay` at or after `from`, or npos. glibc's memmem, not
// string_view::find: find stops at every line break (the needle's first byte), and took 18-26 ms
// through the 34 MB plan of 50,000 shapes where memmem took 7 ms (this 2-core VM).
std::size_t find_from(std::string_view hay, std::string_view needle, std::size_t from) {
  if (from > hay.size()) return std::string_view::npos;
  const void* at = ::memmem(hay.data() + from, hay.size() - from, needle.data(), needle.size());
  return at ? static_cast<std::size_t>(static_cast<const char*>(at) - hay.data())
            : std::string_view::npos;
}

// Every occurrence of `needle` in `hay`, in order, until `found` returns true.
bool find_each(std::string_view hay, std::string_view needle,
               const std::function<bool(std::size_t)>& found) {
  for (std::size_t at = find_from(hay, needle, 0); at != std::string_view::npos;
       at = find_from(hay, needle, at + 1))
    if (found(at)) return true;
  return false;
}

// The value of the top-level array `key`, from its "[" to its "]".
std::optional<Span> top_level_array(std::string_view text, const std::string& key) {
  const std::string opening = "\n  " + json(key).dump() + ": [";
  const std::size_t at = find_from(text, opening, 0);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t open = at + opening.size() - 1;
  if (text.substr(open, 2) == "[]") return Span{open, open + 2};
  const std::size_t last = find_from(text, kObjectArrayEnd, open);
  if (last == std::string_view::npos) return std::nullopt;
  return Span{open, last + kObjectArrayEnd.size()};
}

// The element of `array` that has the field line `"<field>": <value>` and that `take` accepts.
std::optional<Span> element_with(std::string_view text, Span array, const std::string& field,
                                 const std::string& value,
                                 const std::function<bool(std::string_view)>& take) {
  const std::string line = "\n      " + json(field).dump() + ": " + json(value).dump();
  const std::string_view hay = array.of(text);
  std::optional<Span> element;
  find_each(hay, line, [&](std::size_t at) {
    const char next = at + line.size() < hay.size() ? hay[at + line.size()] : '\0';
    if (next != ',' && next != '\n') return false;  // a longer value with this one as prefix
    const std::size_t begin = hay.rfind(kElementStart, at);
    const std::size_t end = hay.find(kElementEnd, at);
    if (begin == std::string_view::npos || end == std::string_view::npos) return false;
    const Span s{array.begin + begin + 1, array.begin + end + kElementEnd.size()};
    if (!take(s.of(text))) return false;
    element = s;
    return true;
  });
  return element;
}

// plan.json with the value of `shapes` and of `tasks` replaced by the arm's entries.
std::string header_with(std::string_view text, Span shapes, Span tasks, std::string_view shape,
                        std::string_view task) {
  const bool shapes_first = shapes.begin < tasks.begin;
  const Span first = shapes_first ? shapes : tasks, second = shapes_first ? tasks : shapes;
  const std::string_view first_value = shapes_first ? shape : task;
  const std::string_view second_value = shapes_first ? task : shape;
  std::string out;
  out.reserve(text.size() - (first.end - first.begin) - (second.end - second.begin) + shape.size() +
              task.size() + 4);
  out.append(text.substr(0, first.begin)).append("[").append(first_value).append("]");
  out.append(text.substr(first.end, second.begin - first.end));
  out.append("[").append(second_value).append("]").append(text.substr(second.end));
  return out;
}

// The plan's header with the arm's shape and task, or nothing (and why in `why_not`).
std::optional<Plan> arm_entries(std::string_view text, const std::string& shape,
                                const std::string& arm, const std::string& where,
                                std::string& why_not) {
  const auto shapes = top_level_array(text, "shapes");
  const auto tasks = top_level_array(text, "tasks");
  if (!shapes || !tasks) {
    why_not = "its \"shapes\" and \"tasks\" are not laid out as abharness writes them";
    return std::nullopt;
  }
  const auto task = element_with(text, *tasks, "shape", shape, [&](std::string_view element) {
    const json t = parse_json(std::string(element), where);
    const auto it = t.find("arm");
    return it != t.end() && it->is_string() && it->get<std::string>() == arm;
  });
  const auto shape_at =
      element_with(text, *shapes, "id", shape, [](std::string_view) { return true; });
  if (!task || !shape_at) {
    why_not = "no task and shape of " + shape + "/" + arm + " laid out as abharness writes them";
    return std::nullopt;
  }
  const std::string header = header_with(text, *shapes, *tasks, shape_at->of(text), task->of(text));
  return plan_from_json(parse_json(header, where), where);
}

}  // namespace

ArmPlanRead load_arm_plan(const std::filesystem::path& run_dir, const std::string& shape,
                          const std::string& arm, const std::string& checked_sha256) {
  const std::string where = printable(plan_path(run_dir).string());
  // Mapped, not read: the bytes are hashed and searched, and only the arm's entries are copied.
  // Results bind to the digest of these bytes, so a plan.json edited in place while they are read
  // still fails validation by that digest.
  const MappedFile mapped = RunDirFs(run_dir).map(kPlanFile, kPlanMaxBytes);
  const std::string_view bytes = mapped.bytes();
  ArmPlanRead r;
  r.bytes = bytes.size();
  const std::string actual = sha256_hex(bytes);
  if (actual != checked_sha256)
    throw ProvenanceError(where + ": plan-digest: expected " + checked_sha256 +
                          " (the plan abharness checked before starting this worker), found " +
                          actual + ": the plan changed since; start a new run");
  try {
    r.plan = arm_entries(bytes, shape, arm, where, r.why_not);
  } catch (const Error& e) {
    // The whole plan passed these checks: an entry that fails them was cut out wrongly.
    r.why_not = std::string("its entries for the arm did not read back: ") + e.what();
  }
  if (r.plan) r.plan->file_sha256 = actual;
  return r;
}

}  // namespace abh
