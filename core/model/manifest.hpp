// The build recipe a kernel repository declares in `abharness.json` at its root. The recipe
// is an argv, run without a shell unless the manifest sets "shell": true explicitly.
//
//   { "schema_version": 1,
//     "plugins": { "cpu": { "argv": ["c++", "-O2", "-shared", "-fPIC",
//                                    "-I${ABHARNESS_INCLUDE}", "gemm.cpp", "-o", "libgemm.so"],
//                           "artifact": "libgemm.so", "env": {}, "timeout_s": 600 } } }
//
// `${ABHARNESS_INCLUDE}` (the plugin ABI headers) and `${CUDA_HOME}` are substituted in argv and
// env values; no other expansion happens.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "system/json_io.hpp"

namespace abh {

inline constexpr const char* kManifestName = "abharness.json";

struct BuildRecipe {
  std::string target;  // the key under "plugins", e.g. "cpu" or "cuda"
  std::vector<std::string> argv;
  std::string artifact;  // path of the built plugin, relative to the source root
  std::map<std::string, std::string> env;
  bool shell = false;
  double timeout_s = 1800;
};

struct SubstitutionVars {
  std::string abharness_include;
  std::string cuda_home;
};

// Reads <src>/abharness.json and returns the recipe for `target`, with variables substituted.
BuildRecipe load_recipe(const std::filesystem::path& src, const std::string& target,
                        const SubstitutionVars& vars);

json to_json(const BuildRecipe& r);

}  // namespace abh
