// The variants file of `abharness run --variants FILE` (docs/variants.md): one baseline and any
// number of candidates, each a revision plus build settings (substituted into the manifest's
// recipe, model/manifest.hpp) plus run settings (plugin parameters merged into every shape).
//
//   {"schema_version": 1, "baseline": "o2",
//    "variants": [{"name": "o2", "revision": "main", "build": {"OPT": "-O2"}},
//                 {"name": "pr", "revision": "my-branch", "build": {"OPT": "-O3"},
//                  "run": {"tactic": "default"}}]}
//
// `--baseline REV --candidate REV` is the same as a file of two variants named "baseline" and
// "candidate" without settings (two_variant_file).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "system/json_io.hpp"

namespace abh {

struct VariantSpec {
  std::string name;      // [A-Za-z][A-Za-z0-9_-]{0,31}: a path component and an arm prefix
  std::string revision;  // as the user typed it (commit, branch, tag, WORKTREE)
  std::map<std::string, std::string> build;  // build settings: ${NAME} -> value, NAME=value
  json run = json::object();                 // plugin parameters merged into every shape
  bool operator==(const VariantSpec&) const = default;
};

struct VariantsFile {
  int schema_version = 1;
  std::string baseline;
  std::vector<VariantSpec> variants;  // as written; ordered_variants() puts the baseline first
  bool operator==(const VariantsFile&) const = default;
};

// Reads and checks a variants file (schemas/variants.schema.json, then what a schema cannot say:
// unique names, a baseline that is one of the variants). UsageError naming the file, the variant
// and the field, and the fix.
VariantsFile variants_file_from_json(const json& j, const std::string& where);
VariantsFile load_variants_file(const std::filesystem::path& path);
json to_json(const VariantsFile& f);

// The variants in plan order: the baseline first, then the candidates as the file lists them.
std::vector<VariantSpec> ordered_variants(const VariantsFile& f);

// The two-variant shorthand: `--baseline REV --candidate REV`.
VariantsFile two_variant_file(const std::string& baseline, const std::string& candidate);

// Whether these variants are the two-variant shorthand's (named baseline and candidate, no
// settings): such a run is planned exactly as before variants files (arms A1, B, A2).
bool is_two_variant_shorthand(const std::vector<VariantSpec>& ordered);

// Throws UsageError when `name` cannot name a variant (see VariantSpec::name).
void check_variant_name(const std::string& name, const std::string& where);

}  // namespace abh
