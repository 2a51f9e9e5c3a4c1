#include "system/json_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_set>

#include "system/eintr.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// A value as it appears in a message: its JSON text, cut short so that a hostile document cannot
// make an error message as large as itself.
std::string short_dump(const json& j) {
  std::string v = j.dump();
  if (v.size() > 40) v = v.substr(0, 37) + "...";
  return v;
}

std::string type_of(const json& j) {
  if (j.is_number_integer()) return "integer " + j.dump();
  if (j.is_number()) return "number " + j.dump();
  return std::string(j.type_name()) + " " + short_dump(j);
}

template <typename T>
const char* expected_name() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  if constexpr (std::is_integral_v<T>) return "an integer";
  if constexpr (std::is_floating_point_v<T>) return "a number";
  return "a value of another type";
}

template <typename T>
bool has_type(const json& v) {
  if constexpr (std::is_same_v<T, std::string>) return v.is_string();
  if constexpr (std::is_same_v<T, bool>) return v.is_boolean();
  if constexpr (std::is_integral_v<T>) return v.is_number_integer();
  if constexpr (std::is_floating_point_v<T>) return v.is_number();
  return true;
}

void sys_fail(const std::string& what, const fs::path& p) {
  throw Error(what + " " + p.string() + ": " + std::strerror(errno));
}

}  // namespace

namespace {

// Where the parser is, as a field path ("shapes[0].params.m"), kept up to date from nlohmann's
// parse events, so that a refusal can name the field and not only a byte offset.
class ParsePath {
 public:
  void open(bool array) { frames_.push_back(Frame{array, {}, 0, {}}); }
  void close() {
    frames_.pop_back();
    element_done();
  }
  void element_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  // Records the key of the member being parsed; false when the object already has it.
  bool key(const std::string& k) {
    frames_.back().key = k;
    return frames_.back().keys.insert(k).second;
  }
  std::string str() const {
    std::string out;
    for (const auto& f : frames_) {
      if (f.array)
        out += "[" + std::to_string(f.index) + "]";
      else if (!f.keys.empty())
        out += (out.empty() ? "" : ".") + printable(f.key);
    }
    return out;
  }

 private:
  struct Frame {
    bool array;
    std::string key;                       // objects: the member being parsed
    std::size_t index;                     // arrays: the element being parsed
    std::unordered_set<std::string> keys;  // objects: the keys seen so far
  };
  std::vector<Frame> frames_;
};

struct DuplicateKey {
  std::string path;
  std::string key;
};

// " (field 'a.b')", or nothing at the top level.
std::string at_field(const std::string& path) {
  return path.empty() ? "" : " (field '" + path + "')";
}

// Builds the document from nlohmann's SAX events, as its own DOM parser does, and bounds nesting
// before it goes deeper (hostile input cannot make it allocate without end), refuses a key given
// twice in one object and keeps the path for messages. nlohmann keeps the last of two equal keys,
// another reader may keep the first: a digest taken over what one reader kept would not cover what
// the other sees (a second "samples_ns" would be measured by one, hashed by none). Not nlohmann's
// callback parser: after every object it scans the object's parent for a discarded value, so an
// array of n objects cost n²/2 steps (plan.json of 150,000 tasks: 23 s against 2 s parsed plainly).
class LimitedDomBuilder {
 public:
  explicit LimitedDomBuilder(int max_depth) : max_depth_(max_depth) {}
  bool too_deep() const { return too_deep_; }
  const ParsePath& path() const { return path_; }
  json take() { return std::move(root_); }

  bool null() { return value(json()); }
  bool boolean(bool b) { return value(json(b)); }
  bool number_integer(json::number_integer_t i) { return value(json(i)); }
  bool number_unsigned(json::number_unsigned_t u) { return value(json(u)); }
  bool number_float(json::number_float_t f, const std::string&) { return value(json(f)); }
  bool string(std::string& s) { return value(json(std::move(s))); }
  bool binary(json::binary_t& b) { return value(json(std::move(b))); }
  bool start_object(std::size_t) { return open(json::object(), false); }
  bool start_array(std::size_t) { return open(json::array(), true); }
  bool key(std::string& k) {
    if (too_deep_) return true;
    if (!path_.key(k)) throw DuplicateKey{path_.str(), k};
    member_ = &(*open_.back())[k];
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

 private:
  // Once too deep, nothing more is built: the document is refused when the parse ends (after any
  // syntax error in the rest, which is reported first, as before).
  bool value(json v) {
    if (too_deep_) return true;
    place(std::move(v));
    path_.element_done();
    return true;
  }
  bool open(json container, bool array) {
    if (too_deep_) return true;
    if (static_cast<int>(open_.size()) >= max_depth_) {
      too_deep_ = true;
      return true;
    }
    open_.push_back(place(std::move(container)));
    path_.open(array);
    return true;
  }
  bool close() {
    if (too_deep_) return true;
    open_.pop_back();
    path_.close();
    return true;
  }
  json* place(json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (open_.back()->is_array()) {
      open_.back()->push_back(std::move(v));
      return &open_.back()->back();
    }
    *member_ = std::move(v);
    return member_;
  }

  int max_depth_;
  bool too_deep_ = false;
  ParsePath path_;
  json root_;
  std::vector<json*> open_;  // the containers being filled, outermost first
  json* member_ = nullptr;   // the member of the innermost object the next value is
};

// The fix for a file past a size or depth limit. The limits sit above any file abharness writes; a
// grid's is 16 MiB, and 100,000 shapes of four parameters take 9.3 MB compact, 15.5 MB indented.
constexpr const char* kNotMeant =
    ": check that this is the file meant, or split a grid this large into several runs";

// nlohmann says "number overflow parsing '1e999'"; the number is the part in quotes.
std::string overflowing_number(const std::string& what) {
  const auto open = what.find('\'');
  const auto close = what.rfind('\'');
  if (open == std::string::npos || close <= open) return "a number";
  return "the number " + printable(what.substr(open + 1, close - open - 1));
}

}  // namespace

json parse_json(const std::string& text, const std::string& origin, const JsonLimits& lim) {
  if (text.size() > lim.max_bytes)
    throw Error(origin + ": " + std::to_string(text.size()) + " bytes is more than the limit of " +
                std::to_string(lim.max_bytes) + kNotMeant);
  LimitedDomBuilder builder(lim.max_depth);
  const ParsePath& path = builder.path();
  try {
    json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
  } catch (const DuplicateKey& dup) {
    throw Error(origin + ": duplicate key " + quote(dup.key) + at_field(dup.path) +
                ": every key may appear once in an object (readers disagree on which of two "
                "values counts); remove one");
  } catch (const json::out_of_range& e) {
    // 406: a number that does not fit a double (1e999). Not a syntax error: say which field.
    throw Error(origin + ": " + overflowing_number(e.what()) + at_field(path.str()) +
                " is out of range: numbers must fit a 64-bit floating point value");
  } catch (const json::exception& e) {
    throw Error(origin + ": not valid JSON" + at_field(path.str()) + " (" + printable(e.what()) +
                "); correct the file there (`python3 -m json.tool FILE` shows the place too)");
  }
  if (builder.too_deep())
    throw Error(origin + ": JSON nested deeper than " + std::to_string(lim.max_depth) + " levels" +
                kNotMeant);
  return builder.take();
}

std::string read_text_file(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw Error("cannot read " + path.string() + ": it is a directory; give a file");
  const auto size = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
  if (size > max_bytes)
    throw Error(path.string() + ": " + std::to_string(size) + " bytes is more than the limit of " +
                std::to_string(max_bytes) + kNotMeant);
  // Read to its end, no further than the limit: a pipe (--grid <(make_grid)) has no size to ask.
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot read " + path.string() + ": " +
                (fs::exists(path, ec) ? std::strerror(errno) : "no such file"));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes)
      throw Error(path.string() + ": more than the limit of " + std::to_string(max_bytes) +
                  " bytes" + kNotMeant);
  }
  if (in.bad()) throw Error("cannot read " + path.string() + ": " + std::strerror(errno));
  return text;
}

json read_json_file(const fs::path& path, const JsonLimits& lim) {
  return parse_json(read_text_file(path, lim.max_bytes), printable(path.string()), lim);
}

void write_file_atomic(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError("cannot write " + path.string() + ": it is a directory; name a file");
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  if (fs::create_directories(dir, ec); ec)
    throw Error("cannot create the directory " + dir.string() + " for " + path.filename().string() +
                ": " + ec.message() + ": name a place you can write");
  fs::path tmp = dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) sys_fail("cannot create", tmp);
  size_t off = 0;
  while (off < content.size()) {
    const ssize_t n =
        retry_on_eintr([&] { return ::write(fd, content.data() + off, content.size() - off); });
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      sys_fail("cannot write", tmp);
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = saved;
    sys_fail("cannot fsync", tmp);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;  // the temp file is not left behind
    ::unlink(tmp.c_str());
    errno = saved;
    sys_fail("cannot rename into", path);
  }
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_json_atomic(const fs::path& path, const json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

std::string canonical(const json& j) {
  return j.dump();
}  // nlohmann objects are key-sorted

void require_object(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected a JSON object, found " + type_of(j));
}

const json& object_field(const json& obj, const char* key, const std::string& where) {
  require_object(obj, where);
  auto it = obj.find(key);
  if (it == obj.end()) throw Error(where + ": missing field '" + key + "'");
  if (!it->is_object())
    throw Error(where + ": field '" + key + "': expected an object, found " + type_of(*it));
  return *it;
}

const json& array_field(const json& obj, const char* key, const std::string& where) {
  require_object(obj, where);
  auto it = obj.find(key);
  if (it == obj.end()) throw Error(where + ": missing field '" + key + "'");
  if (!it->is_array()) throw Error(where + ": field '" + key + "': expected an array");
  return *it;
}

std::vector<std::string> string_array(const json& obj, const char* key, const std::string& where) {
  require_object(obj, where);
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array())
    throw Error(where + ": field '" + key + "': expected an array of strings");
  std::vector<std::string> out;
  out.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    if (!item.is_string())
      throw Error(where + ": field '" + key + "[" + std::to_string(i) +
                  "]': expected a string, found " + short_dump(item));
    out.push_back(item.get<std::string>());
  }
  return out;
}

int schema_version(const json& obj, const std::string& where, int oldest, int newest,
                   const std::string& document, const std::string& fix) {
  const int found = field<int>(obj, "schema_version", where);
  if (found < oldest || found > newest)
    throw Error(where + ": field 'schema_version': found " + std::to_string(found) +
                ", this abharness reads " + document + " schema " + std::to_string(oldest) +
                (oldest == newest ? "" : " to " + std::to_string(newest)) +
                (fix.empty() ? "" : ": " + fix));
  return found;
}

int schema_version(const json& obj, const std::string& where, int expected,
                   const std::string& document, const std::string& fix) {
  return schema_version(obj, where, expected, expected, document, fix);
}

template <typename T>
T field(const json& obj, const char* key, const std::string& where) {
  require_object(obj, where);
  auto it = obj.find(key);
  if (it == obj.end()) throw Error(where + ": missing field '" + key + "'");
  if (!has_type<T>(*it))
    throw Error(where + ": field '" + key + "': expected " + expected_name<T>() + ", found " +
                type_of(*it));
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Range-check before narrowing: a hostile 1e30 must not wrap around.
    if (it->is_number_unsigned()) {
      auto u = it->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        throw Error(where + ": field '" + key + "': " + it->dump() + " is out of range");
    } else {
      auto s = it->get<std::int64_t>();
      if (s < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
          (s > 0 && static_cast<std::uint64_t>(s) >
                        static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
        throw Error(where + ": field '" + key + "': " + it->dump() + " is out of range");
    }
  }
  return it->get<T>();
}

template <typename T>
T field_or(const json& obj, const char* key, const std::string& where, T fallback) {
  require_object(obj, where);
  if (!obj.contains(key) || obj.at(key).is_null()) return fallback;
  return field<T>(obj, key, where);
}

template std::string field<std::string>(const json&, const char*, const std::string&);
template bool field<bool>(const json&, const char*, const std::string&);
template int field<int>(const json&, const char*, const std::string&);
template std::int64_t field<std::int64_t>(const json&, const char*, const std::string&);
template std::uint64_t field<std::uint64_t>(const json&, const char*, const std::string&);
template double field<double>(const json&, const char*, const std::string&);
template std::string field_or<std::string>(const json&, const char*, const std::string&,
                                           std::string);
template bool field_or<bool>(const json&, const char*, const std::string&, bool);
template int field_or<int>(const json&, const char*, const std::string&, int);
template std::int64_t field_or<std::int64_t>(const json&, const char*, const std::string&,
                                             std::int64_t);
template double field_or<double>(const json&, const char*, const std::string&, double);

}  // namespace abh
