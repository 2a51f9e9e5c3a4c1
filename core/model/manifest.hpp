// The build recipe a kernel repository declares in `abharness.json` at its root. The recipe
// is an argv, run without a shell unless the manifest sets "shell": true explicitly.
//
//   { "schema_version": 1,
//     "plugins": { "cpu": { "argv": ["c++", "-O2", "-shared", "-fPIC",
//                                    "-I${ABHARNESS_INCLUDE}", "gemm.cpp", "-o", "libgemm.so"],
//                           "artifact": "libgemm.so", "env": {}, "timeout_s": 600 } } }
//
// `${ABHARNESS_INCLUDE}` (the plugin ABI headers) and `${CUDA_HOME}` are substituted in argv and
// env values, and so is each build setting the target declares ("build_settings": {"OPT": "-O2"},
// its default; docs/variants.md). In the argv of a target that declares build settings and runs
// without a shell, any other ${NAME} is an error (a misspelt setting). No other expansion happens.
//
// A Python plugin (docs/python.md) names a module of the repository and the function that makes a
// problem from a shape's parameters; it needs no build step (argv and artifact are then optional,
// for a plugin that compiles something first):
//
//     "plugins": { "np": { "python": { "module": "bench.matmul", "entry": "make_problem",
//                                      "device": "cpu", "interpreter": "python3" } } }
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "system/json_io.hpp"

namespace abh {

inline constexpr const char* kManifestName = "abharness.json";

struct PythonPlugin {
  std::string module;                  // dotted module name, imported from the variant's sources
  std::string entry = "make_problem";  // module attribute called with the shape's parameters
  std::string device = "cuda";         // where run() enqueues its work: "cuda" or "cpu"
  std::string interpreter;  // optional: the interpreter to use when --python is not given
  bool operator==(const PythonPlugin&) const = default;
};

struct BuildRecipe {
  std::string target;             // the key under "plugins", e.g. "cpu" or "cuda"
  std::vector<std::string> argv;  // empty: nothing to build (Python plugins only)
  std::string artifact;  // path of the built plugin, relative to the source root; empty: none
  std::map<std::string, std::string> env;
  bool shell = false;
  double timeout_s = 1800;
  std::optional<PythonPlugin> python;  // set: a Python plugin (the artifact, if any, is its helper)
  bool has_build() const { return !argv.empty(); }
};

struct SubstitutionVars {
  std::string abharness_include;
  std::string cuda_home;
  // A variant's build settings (model/variants_file.hpp). Each must be declared, with its default,
  // under the target's "build_settings"; every declared setting, at the variant's value or its
  // default, replaces ${NAME} in argv and env and is set as NAME in the build's environment.
  std::map<std::string, std::string> build_settings;
};

// Reads <src>/abharness.json and returns the recipe for `target`, with variables substituted.
BuildRecipe load_recipe(const std::filesystem::path& src, const std::string& target,
                        const SubstitutionVars& vars);

// The targets (keys under "plugins") that <src>/abharness.json declares, sorted; UsageError like
// load_recipe's when it is missing or malformed. Shell completion offers them for --target.
std::vector<std::string> manifest_targets(const std::filesystem::path& src);

json to_json(const BuildRecipe& r);
json to_json(const PythonPlugin& p);
// Reads the "python" object of a recipe (manifest or plan); `where` names it in errors.
PythonPlugin python_plugin_from_json(const json& j, const std::string& where);

}  // namespace abh
