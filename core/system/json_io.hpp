// JSON in and out of files. Every file abharness reads may be hostile or damaged (results,
// plans, grids, manifests, caches), so reading is bounded in size and depth and every error names
// the file; every file abharness writes is written atomically (temp file, fsync, rename) so a
// crash at any instant leaves either the old file or the new one, never half of one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace abh {

using json = nlohmann::json;

struct JsonLimits {
  std::uintmax_t max_bytes = 64u << 20;
  int max_depth = 64;
};

// Parses `text`; `origin` names where it came from in error messages.
json parse_json(const std::string& text, const std::string& origin, const JsonLimits& lim = {});
json read_json_file(const std::filesystem::path& path, const JsonLimits& lim = {});
std::string read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes = 64u << 20);

// Writes `content` to `path` atomically: a hidden temp file beside it, fsync, rename, fsync of
// the directory. Creates missing parent directories.
void write_file_atomic(const std::filesystem::path& path, const std::string& content);
void write_json_atomic(const std::filesystem::path& path, const json& j);

// The canonical text of a JSON value: sorted keys, no whitespace. Digests are taken over this.
std::string canonical(const json& j);

// Typed field access with messages of the form "<where>: field 'x': expected a string, found 5".
// `where` names the file (and the object inside it) the field is read from.
template <typename T>
T field(const json& obj, const char* key, const std::string& where);
template <typename T>
T field_or(const json& obj, const char* key, const std::string& where, T fallback);
const json& object_field(const json& obj, const char* key, const std::string& where);
// "<where>: missing field 'x'" or "<where>: field 'x': expected an array".
const json& array_field(const json& obj, const char* key, const std::string& where);
// An array of strings (argv, kernel names, ...): "<where>: field 'x': expected an array of
// strings" when it is missing or not an array, "<where>: field 'x[2]': expected a string, found 5"
// for an item that is not a string.
std::vector<std::string> string_array(const json& obj, const char* key, const std::string& where);
void require_object(const json& j, const std::string& where);
// A versioned document's "schema_version", refused unless it is `expected`: "<where>: field
// 'schema_version': found 2, this abharness reads <document> schema 1", then ": <fix>" if given.
// The same for a reader of schemas `oldest` to `newest`: "... reads <document> schema 2 to 3".
int schema_version(const json& obj, const std::string& where, int oldest, int newest,
                   const std::string& document, const std::string& fix);
int schema_version(const json& obj, const std::string& where, int expected,
                   const std::string& document, const std::string& fix = "");

}  // namespace abh
