#include "system/json_schema.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

namespace detail {
// Generated from schemas/*.schema.json by cmake/embed_files.cmake: (file name, text).
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_schemas();
}  // namespace detail

namespace {

constexpr std::string_view kSuffix = ".schema.json";

struct CompiledSchema {
  json doc;
  valijson::Schema schema;
};

const CompiledSchema& compiled(std::string_view name) {
  static std::mutex m;
  static std::map<std::string, std::unique_ptr<CompiledSchema>, std::less<>> cache;
  std::lock_guard<std::mutex> lock(m);
  if (auto it = cache.find(name); it != cache.end()) return *it->second;
  auto c = std::make_unique<CompiledSchema>();
  c->doc = parse_json(std::string(embedded_schema(name)), std::string(name) + ".schema.json");
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter adapter(c->doc);
  parser.populateSchema(adapter, c->schema);
  return *cache.emplace(std::string(name), std::move(c)).first->second;
}

// --- Where a violation is: the instance path and the schema nodes that apply there ------------

using Path = std::vector<std::string>;

std::string pointer_of(const Path& path) {
  std::string out;
  for (const auto& seg : path) {
    out += '/';
    for (char c : seg) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return out;
}

const json* value_at(const json& doc, const Path& path) {
  const json* v = &doc;
  for (const auto& seg : path) {
    if (v->is_object()) {
      auto it = v->find(seg);
      if (it == v->end()) return nullptr;
      v = &*it;
    } else if (v->is_array()) {
      std::size_t i = 0;
      for (char c : seg) i = i * 10 + static_cast<std::size_t>(c - '0');
      if (seg.empty() || seg.find_first_not_of("0123456789") != std::string::npos || i >= v->size())
        return nullptr;
      v = &(*v)[i];
    } else {
      return nullptr;
    }
  }
  return v;
}

const json& deref(const json& root, const json& node) {
  const json* n = &node;
  for (int hops = 0; n->is_object() && n->contains("$ref") && hops < 16; ++hops) {
    const std::string ref = n->at("$ref").get<std::string>();
    if (ref.rfind("#", 0) != 0) break;
    n = &root.at(json::json_pointer(ref.substr(1)));
  }
  return *n;
}

// Every schema node that applies to the instance at `path`: through $ref, allOf and the branches
// of if/then/else (which branch applied is not known here; a node is chosen by its keywords).
void collect(const json& root, const json& raw, std::span<const std::string> path,
             std::vector<const json*>& out) {
  const json& node = deref(root, raw);
  if (!node.is_object()) return;
  for (const char* branch : {"then", "else"})
    if (node.contains(branch)) collect(root, node.at(branch), path, out);
  if (node.contains("allOf"))
    for (const auto& sub : node.at("allOf")) collect(root, sub, path, out);
  if (path.empty()) {
    out.push_back(&node);
    return;
  }
  const std::string& seg = path.front();
  const auto rest = path.subspan(1);
  if (node.contains("properties") && node.at("properties").contains(seg))
    collect(root, node.at("properties").at(seg), rest, out);
  else if (node.contains("additionalProperties") && node.at("additionalProperties").is_object())
    collect(root, node.at("additionalProperties"), rest, out);
  if (node.contains("items") && !seg.empty() && seg.size() < 10 &&
      seg.find_first_not_of("0123456789") == std::string::npos) {
    const json& items = node.at("items");
    const std::size_t i = std::stoul(seg);
    if (items.is_object())
      collect(root, items, rest, out);
    else if (items.is_array() && i < items.size())
      collect(root, items[i], rest, out);
    else if (node.contains("additionalItems"))
      collect(root, node.at("additionalItems"), rest, out);
  }
}

// --- What is wrong, in words --------------------------------------------------------------------

enum class Kind {
  wrapper,  // "item #2 failed": its children say why
  type,
  required,
  unknown_field,
  pattern,
  constant,
  enumeration,
  minimum,
  exclusive_minimum,
  min_items,
  max_items,
  min_length,
  other
};

struct Classified {
  Kind kind;
  const char* keyword;  // the schema keyword that failed, whose node describes the fix
  std::string name;     // the property, for required and unknown_field
};

// valijson's messages, by their fixed wording (valijson 1.0, Debian 12).
Classified classify(const std::string& d) {
  auto starts = [&](const char* p) { return d.rfind(p, 0) == 0; };
  // The last '...' of the message ("Missing required property 'params'.").
  auto quoted = [&] {
    const auto b = d.rfind('\'');
    const auto a = b == std::string::npos || b == 0 ? std::string::npos : d.rfind('\'', b - 1);
    return a == std::string::npos ? std::string() : d.substr(a + 1, b - a - 1);
  };
  if (starts("Failed to validate item #") ||
      starts("Failed to validate against schema associated") ||
      starts("Failed to validate against child schema") ||
      starts("Failed to validate against a conditional schema") ||
      starts("Failed to validate against additional properties schema") ||
      starts("Failed to validate against dependent schema"))
    return {Kind::wrapper, "", ""};
  if (starts("Value type not permitted")) return {Kind::type, "type", ""};
  if (starts("Missing required property")) return {Kind::required, "required", quoted()};
  if (starts("Object contains a property that could not be validated"))
    return {Kind::unknown_field, "additionalProperties", quoted()};
  if (starts("Failed to match regex")) return {Kind::pattern, "pattern", ""};
  if (starts("Failed to match expected value set by 'const'")) return {Kind::constant, "const", ""};
  if (starts("Failed to match against any enum")) return {Kind::enumeration, "enum", ""};
  if (starts("Expected number greater than or equal")) return {Kind::minimum, "minimum", ""};
  if (starts("Expected number greater than"))
    return {Kind::exclusive_minimum, "exclusiveMinimum", ""};
  if (starts("Array should contain no fewer")) return {Kind::min_items, "minItems", ""};
  if (starts("Array should contain no more")) return {Kind::max_items, "maxItems", ""};
  if (starts("String should be no fewer")) return {Kind::min_length, "minLength", ""};
  return {Kind::other, "", ""};
}

std::string shown(const json* v) {
  if (!v) return "nothing";
  if (v->is_null()) return "null";
  std::string text = v->dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  if (v->is_number_integer()) return "integer " + text;
  if (v->is_number()) return "number " + text;
  return std::string(v->type_name()) + " " + text;
}

std::string type_words(const json& type) {
  static const std::map<std::string, std::string> words = {
      {"string", "a string"},  {"integer", "an integer"}, {"number", "a number"},
      {"object", "an object"}, {"array", "an array"},     {"boolean", "true or false"},
      {"null", "null"}};
  std::vector<std::string> out;
  for (const auto& t : type.is_array() ? type : json::array({type}))
    out.push_back(words.count(t.get<std::string>()) ? words.at(t.get<std::string>())
                                                    : t.get<std::string>());
  return join(out, " or ");
}

// The node among `nodes` that holds `keyword` (the one whose check failed), else any node.
const json* node_with(const std::vector<const json*>& nodes, const char* keyword) {
  for (const json* n : nodes)
    if (*keyword && n->contains(keyword) && n->contains("description")) return n;
  for (const json* n : nodes)
    if (n->contains("description")) return n;
  for (const json* n : nodes)
    if (*keyword && n->contains(keyword)) return n;
  return nodes.empty() ? nullptr : nodes.front();
}

std::string problem_of(const Classified& c, const json* node, const json* v,
                       const std::string& raw) {
  const auto kw = [&](const char* k) {
    return node && node->contains(k) ? node->at(k).dump() : "?";
  };
  switch (c.kind) {
    case Kind::type:
      return "expected " + (node && node->contains("type") ? type_words(node->at("type")) : "?") +
             ", found " + shown(v);
    case Kind::required:
      return "missing";
    case Kind::unknown_field:
      return "unknown field";
    case Kind::pattern:
      return v && v->is_object() ? "a name in it is not allowed" : shown(v) + " is not allowed";
    case Kind::constant:
      return "found " + shown(v) + ", expected " + kw("const");
    case Kind::enumeration:
      return "found " + shown(v) + ", expected one of " + kw("enum");
    case Kind::minimum:
      return "found " + shown(v) + ", expected at least " + kw("minimum");
    case Kind::exclusive_minimum:
      return "found " + shown(v) + ", expected more than " + kw("exclusiveMinimum");
    case Kind::min_items:
      return "has " + std::to_string(v ? v->size() : 0) + " item(s), expected at least " +
             kw("minItems");
    case Kind::max_items:
      return "has " + std::to_string(v ? v->size() : 0) + " items, expected at most " +
             kw("maxItems");
    case Kind::min_length:
      return v && v->is_string() && v->get<std::string>().empty()
                 ? "is empty"
                 : "is shorter than " + kw("minLength");
    case Kind::wrapper:
    case Kind::other:
      break;
  }
  std::string text = raw;
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

// The fields an object may have, for "unknown field": every property any applying node names.
std::string known_fields(const std::vector<const json*>& nodes) {
  std::vector<std::string> names;
  for (const json* n : nodes)
    if (n->contains("properties"))
      for (auto it = n->at("properties").begin(); it != n->at("properties").end(); ++it)
        if (std::find(names.begin(), names.end(), it.key()) == names.end())
          names.push_back(it.key());
  return names.empty() ? "remove it" : "the fields here are " + join(names, ", ");
}

SchemaViolation explain(const json& schema, const json& doc, Path path, const Classified& c,
                        const std::string& raw) {
  std::vector<const json*> here;
  collect(schema, schema, path, here);
  SchemaViolation out;
  if (c.kind == Kind::unknown_field) {
    out.fix = "remove it or fix its name: " + known_fields(here);
    path.push_back(c.name);
  } else if (c.kind == Kind::required) {
    path.push_back(c.name);
    std::vector<const json*> field;
    collect(schema, schema, path, field);
    const json* n = node_with(field, "");
    if (n && n->contains("description")) out.fix = n->at("description").get<std::string>();
  }
  const json* node = node_with(here, c.keyword);
  // The whole file of the wrong kind (an array where an object belongs): its description would
  // say what the format is for, not what to write.
  if (path.empty() && c.kind == Kind::type && schema.contains("type"))
    out.fix = "the file must be " + type_words(schema.at("type")) +
              (schema.contains("required")
                   ? " with the fields " +
                         join(schema.at("required").get<std::vector<std::string>>(), ", ")
                   : std::string()) +
              (schema.contains("title") ? " (" + schema.at("title").get<std::string>() + ")" : "");
  if (out.fix.empty() && node && node->contains("description"))
    out.fix = node->at("description").get<std::string>();
  out.pointer = pointer_of(path);
  out.problem = problem_of(c, node, value_at(doc, path), raw);
  return out;
}

}  // namespace

std::vector<std::string> embedded_schema_names() {
  std::vector<std::string> names;
  for (const auto& [file, text] : detail::embedded_schemas())
    if (file.size() > kSuffix.size() && file.ends_with(kSuffix))
      names.emplace_back(file.substr(0, file.size() - kSuffix.size()));
  std::sort(names.begin(), names.end());
  return names;
}

std::string_view embedded_schema(std::string_view name) {
  for (const auto& [file, text] : detail::embedded_schemas())
    if (file.size() == name.size() + kSuffix.size() && file.starts_with(name) &&
        file.ends_with(kSuffix))
      return text;
  throw Error("no compiled-in schema '" + std::string(name) + "': the known ones are " +
              join(embedded_schema_names(), ", "));
}

std::vector<SchemaViolation> schema_violations(const json& doc, std::string_view name) {
  const CompiledSchema& s = compiled(name);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  if (validator.validate(s.schema, target, &results)) return {};
  std::vector<SchemaViolation> out;
  std::vector<Path> explained;  // where each violation is
  std::vector<Path> wrappers;   // where a wrapper says validation failed below it
  for (const auto& e : results) {
    const Classified c = classify(e.description);
    Path path;
    for (std::size_t i = 1; i < e.context.size(); ++i)  // [0] is "<root>"
      path.push_back(e.context[i].substr(1, e.context[i].size() - 2));
    if (c.kind == Kind::wrapper) {
      const std::string prefix = "Failed to validate against schema associated with property";
      if (e.description.rfind(prefix, 0) == 0) {
        const auto b = e.description.rfind('\''), a = e.description.rfind('\'', b - 1);
        path.push_back(e.description.substr(a + 1, b - a - 1));
      }
      wrappers.push_back(std::move(path));
      continue;
    }
    SchemaViolation v = explain(s.doc, doc, path, c, e.description);
    if (std::find(out.begin(), out.end(), v) == out.end()) {
      out.push_back(std::move(v));
      explained.push_back(std::move(path));
    }
  }
  // valijson 1.0 reports no error of its own for a failed "propertyNames" (it checks the names
  // without a results sink): only the wrappers around it say where. A failure below a wrapper
  // that nothing explained is reported there, so an invalid document never passes silently.
  std::stable_sort(wrappers.begin(), wrappers.end(),
                   [](const Path& x, const Path& y) { return x.size() > y.size(); });
  for (const auto& w : wrappers) {
    const bool covered = std::any_of(explained.begin(), explained.end(), [&](const Path& p) {
      return p.size() >= w.size() && std::equal(w.begin(), w.end(), p.begin());
    });
    if (covered) continue;
    out.push_back(explain(s.doc, doc, w, {Kind::pattern, "propertyNames", ""}, "is not allowed"));
    explained.push_back(w);
  }
  return out;
}

std::string describe(const std::vector<SchemaViolation>& v, const std::string& file) {
  constexpr std::size_t kShown = 10;
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < v.size() && i < kShown; ++i)
    lines.push_back(file + ": " + (v[i].pointer.empty() ? "top level" : v[i].pointer) + ": " +
                    v[i].problem + (v[i].fix.empty() ? "" : "; fix: " + v[i].fix));
  if (v.size() > kShown)
    lines.push_back(file + ": ... and " + std::to_string(v.size() - kShown) + " more problems");
  return join(lines, "\n");
}

void check_schema(const json& doc, std::string_view name, const std::string& file) {
  const auto v = schema_violations(doc, name);
  if (!v.empty()) throw UsageError(describe(v, file));
}

}  // namespace abh
