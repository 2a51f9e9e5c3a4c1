/* The typed reader of a shape's parameters (abh_plugin::Params), part of the optional C++ helpers
 * of plugin_support.hpp, which includes it. Header-only C++17 with no JSON library, so nvcc builds
 * a plugin that uses it on a machine without one. docs/plugins.md shows it in use.
 */
#ifndef ABHARNESS_PLUGIN_PARAMS_HPP
#define ABHARNESS_PLUGIN_PARAMS_HPP

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace abh_plugin {

/* A shape's parameters are not what the plugin reads: the message names the shape and the field,
 * e.g. "shape {"k":0,"m":8,"n":8}: param 'k' must be an integer in [1, 65536], got 0". */
struct ParamError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/* The parameters create() receives: a JSON object of one shape's values, parsed once and read by
 * typed getters. Numbers, strings, booleans and null are read; an array or object value is kept
 * as its JSON text (raw()). Integers are JSON integer literals ("128", not "128.0" or "1e3"). */
class Params {
 public:
  explicit Params(const char* json) : text_(json ? json : "") {
    std::size_t i = 0;
    skip_space(i);
    if (i >= text_.size() || text_[i] != '{') fail_text("is not a JSON object");
    ++i;
    skip_space(i);
    if (i < text_.size() && text_[i] == '}') {
      finish(i + 1);
      return;
    }
    for (;;) {
      skip_space(i);
      if (i >= text_.size() || text_[i] != '"') fail_text("has a key that is not a string");
      std::string key = parse_string(i);
      if (has(key)) fail_text("has the key '" + key + "' twice");
      skip_space(i);
      if (i >= text_.size() || text_[i] != ':') fail_text("lacks a ':' after '" + key + "'");
      ++i;
      skip_space(i);
      values_.emplace_back(std::move(key), parse_value(i));
      skip_space(i);
      if (i < text_.size() && text_[i] == ',') {
        ++i;
        continue;
      }
      if (i < text_.size() && text_[i] == '}') break;
      fail_text("is not a well-formed JSON object");
    }
    finish(i + 1);
  }

  /* The parameters as compact JSON: how messages name the shape. */
  std::string shape() const {
    std::string out = "{";
    for (const auto& kv : values_)
      out += (out.size() > 1 ? "," : "") + quote(kv.first) + ":" + kv.second.raw;
    return out + "}";
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& kv : values_) out.push_back(kv.first);
    return out;
  }
  /* The value's JSON text ("128", "\"bf16\"", "[1,2]"); empty when absent. */
  std::string raw(const std::string& key) const {
    const Value* v = find(key);
    return v ? v->raw : "";
  }

  /* Refuses any key not in `known`, naming the keys it reads. */
  void only(std::initializer_list<const char*> known) const {
    only(std::vector<const char*>(known));
  }
  void only(const std::vector<const char*>& known) const {
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    for (const auto& kv : values_) {
      bool ok = false;
      for (const char* k : known) ok = ok || kv.first == k;
      if (!ok)
        throw ParamError("shape " + shape() + ": unknown param '" + kv.first +
                         "': this plugin reads " + list + "; remove it from the grid");
    }
  }

  long long required_int(const std::string& key, long long lo = LLONG_MIN,
                         long long hi = LLONG_MAX) const {
    return to_int(key, need(key), lo, hi);
  }
  long long optional_int(const std::string& key, long long fallback, long long lo = LLONG_MIN,
                         long long hi = LLONG_MAX) const {
    const Value* v = find(key);
    return v ? to_int(key, *v, lo, hi) : fallback;
  }
  double required_number(const std::string& key, double lo = -HUGE_VAL,
                         double hi = HUGE_VAL) const {
    return to_number(key, need(key), lo, hi);
  }
  double optional_number(const std::string& key, double fallback, double lo = -HUGE_VAL,
                         double hi = HUGE_VAL) const {
    const Value* v = find(key);
    return v ? to_number(key, *v, lo, hi) : fallback;
  }
  std::string required_string(const std::string& key) const { return to_string(key, need(key)); }
  std::string optional_string(const std::string& key, const std::string& fallback) const {
    const Value* v = find(key);
    return v ? to_string(key, *v) : fallback;
  }
  bool optional_bool(const std::string& key, bool fallback) const {
    const Value* v = find(key);
    if (!v) return fallback;
    if (v->kind != Value::boolean) fail(key, "must be true or false, got " + v->raw);
    return v->raw == "true";
  }

  /* Throws the ParamError of `key` with `what` ("must be a multiple of 16, got 20"). */
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ParamError("shape " + shape() + ": param '" + key + "' " + what);
  }

 private:
  struct Value {
    enum Kind { number, string, boolean, null, composite } kind;
    std::string raw;   // the JSON text
    std::string text;  // a string's decoded contents
  };

  const Value* find(const std::string& key) const {
    for (const auto& kv : values_)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
  const Value& need(const std::string& key) const {
    const Value* v = find(key);
    if (!v) fail(key, "is missing: add it to the shape in the grid");
    return *v;
  }
  long long to_int(const std::string& key, const Value& v, long long lo, long long hi) const {
    const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (v.kind != Value::number || v.raw.find_first_of(".eE") != std::string::npos)
      fail(key, "must be an integer in " + range + ", got " + v.raw);
    errno = 0;
    const long long n = std::strtoll(v.raw.c_str(), nullptr, 10);
    if (errno == ERANGE || n < lo || n > hi)
      fail(key, "must be an integer in " + range + ", got " + v.raw);
    return n;
  }
  double to_number(const std::string& key, const Value& v, double lo, double hi) const {
    if (v.kind != Value::number) fail(key, "must be a number, got " + v.raw);
    const double d = std::strtod(v.raw.c_str(), nullptr);
    if (!(d >= lo && d <= hi))
      fail(key, "must be a number in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "], got " + v.raw);
    return d;
  }
  std::string to_string(const std::string& key, const Value& v) const {
    if (v.kind != Value::string) fail(key, "must be a string, got " + v.raw);
    return v.text;
  }

  [[noreturn]] void fail_text(const std::string& what) const {
    throw ParamError("parameters " + text_.substr(0, 200) + " " + what);
  }
  void skip_space(std::size_t& i) const {
    while (i < text_.size() && std::strchr(" \t\r\n", text_[i]) && text_[i]) ++i;
  }
  void finish(std::size_t i) const {
    skip_space(i);
    if (i != text_.size()) fail_text("has text after the object");
  }
  static std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
  }
  static void put_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  unsigned long hex4(std::size_t& i) const {
    if (i + 4 > text_.size()) fail_text("has a cut \\u escape");
    char* end = nullptr;
    const std::string digits = text_.substr(i, 4);
    const unsigned long cp = std::strtoul(digits.c_str(), &end, 16);
    if (end != digits.c_str() + 4) fail_text("has a bad \\u escape");
    i += 4;
    return cp;
  }
  /* A JSON string starting at text_[i] == '"'; i moves past its closing quote. */
  std::string parse_string(std::size_t& i) const {
    std::string out;
    for (++i; i < text_.size() && text_[i] != '"'; ++i) {
      if (static_cast<unsigned char>(text_[i]) < 0x20)
        fail_text("has a control character in a string");
      if (text_[i] != '\\') {
        out += text_[i];
        continue;
      }
      if (++i >= text_.size()) break;
      static const char kEscapes[] = "\"\\/bfnrt", kMeanings[] = "\"\\/\b\f\n\r\t";
      const char* plain = std::strchr(kEscapes, text_[i]);
      if (plain && text_[i]) {
        out += kMeanings[plain - kEscapes];
        continue;
      }
      if (text_[i] != 'u') fail_text("has a bad escape in a string");
      ++i;
      unsigned long cp = hex4(i);
      if (cp >= 0xD800 && cp < 0xDC00 && text_.compare(i, 2, "\\u") == 0) {
        i += 2;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(i) - 0xDC00);
      }
      put_utf8(out, cp);
      --i;
    }
    if (i >= text_.size()) fail_text("has an unterminated string");
    ++i;
    return out;
  }
  /* Any JSON value starting at text_[i]; i moves past it. */
  Value parse_value(std::size_t& i) const {
    const std::size_t start = i;
    if (i >= text_.size()) fail_text("ends where a value should be");
    const char c = text_[i];
    if (c == '"') {
      std::string s = parse_string(i);
      return {Value::string, text_.substr(start, i - start), s};
    }
    for (const char* word : {"true", "false", "null"})
      if (text_.compare(i, std::strlen(word), word) == 0) {
        i += std::strlen(word);
        return {word[0] == 'n' ? Value::null : Value::boolean, word, ""};
      }
    if (c == '-' || (c >= '0' && c <= '9')) {
      while (i < text_.size() && std::strchr("+-.eE0123456789", text_[i]) && text_[i]) ++i;
      const std::string num = text_.substr(start, i - start);
      char* end = nullptr;
      std::strtod(num.c_str(), &end);
      if (end != num.c_str() + num.size()) fail_text("has a malformed number " + num);
      return {Value::number, num, ""};
    }
    if (c == '[' || c == '{') {
      int depth = 0;
      do {
        if (text_[i] == '"') {
          parse_string(i);
          continue;
        }
        depth += (text_[i] == '[' || text_[i] == '{')   ? 1
                 : (text_[i] == ']' || text_[i] == '}') ? -1
                                                        : 0;
        ++i;
      } while (depth > 0 && i < text_.size());
      if (depth != 0) fail_text("has an unclosed array or object");
      return {Value::composite, text_.substr(start, i - start), ""};
    }
    fail_text("has a value that is not JSON at offset " + std::to_string(i));
  }

  std::string text_;
  std::vector<std::pair<std::string, Value>> values_;
};

}  // namespace abh_plugin

#endif
