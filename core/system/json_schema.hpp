// Validation of the files users write (grids, manifests) against the JSON Schemas of schemas/,
// which are compiled into every binary (cmake/embed_files.cmake), so validation cannot be lost with
// a missing or stale file. The validator is valijson, with JSON Schema draft 7 (the newest draft
// the valijson of Debian 12 implements). The schema is the one place that says what a valid file
// is; each violation is reported as
//   <file>: <JSON pointer>: <what is wrong>; fix: <the schema's description of the value>
// so that a message names the file, the place and the fix.
//
// std::regex (which valijson uses for "pattern") recurses once per character on unbounded
// repetition and overflows the stack on strings of some 50,000 characters: the schemas' patterns
// use bounded repetition only ({1,255}, not +), which tests/unit/test_json_schema.cpp checks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "system/json_io.hpp"

namespace abh {

struct SchemaViolation {
  std::string pointer;  // JSON pointer of the offending value, "" for the document itself
  std::string problem;  // "expected an integer, found string \"12\""
  std::string fix;      // the schema's description of what to give there
  bool operator==(const SchemaViolation&) const = default;
};

// The names of the compiled-in schemas ("grid" for schemas/grid.schema.json, ...), sorted.
std::vector<std::string> embedded_schema_names();
// The text of schemas/<name>.schema.json as compiled in; Error for an unknown name.
std::string_view embedded_schema(std::string_view name);

// Every violation of `doc` against the compiled-in schema `name`, in document order; empty when
// `doc` is valid. The schema must be one that valijson reads as draft 7.
std::vector<SchemaViolation> schema_violations(const json& doc, std::string_view name);

// One line per violation (at most ten, then a count): "<file>: <pointer>: <problem>; fix: <fix>".
std::string describe(const std::vector<SchemaViolation>& v, const std::string& file);

// Throws UsageError with describe() when `doc` violates schema `name`; `file` names the document.
void check_schema(const json& doc, std::string_view name, const std::string& file);

}  // namespace abh
