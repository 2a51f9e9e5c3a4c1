// Turns a requested revision into a built, described variant inside the run directory, in two
// phases so that what can be checked before anything is built is: first materialize (never
// touching the user's checkout) and read the manifest's recipe; then build with it (or reuse a
// cached build) and ask a worker what the built plugin is (device, library versions). A Python
// plugin is its materialized sources (plus whatever its optional build step made there): it is
// described by its manifest, never imported here (dry_run.hpp imports it before the plan).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>

#include "model/plan.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {

struct VariantRequest {
  std::string name;  // baseline | candidate, or a name of the variants file
  SourceIdentity source;
  std::string target;  // manifest plugin key
  // The variants file's settings (model/variants_file.hpp): build settings substituted into the
  // recipe (so in its JSON and the build cache key), run settings recorded in the plan.
  std::map<std::string, std::string> build;
  json run = json::object();
};

// A variant whose sources are materialized and whose recipe is read, not yet built.
struct MaterializedVariant {
  Variant variant;            // name, source and recipe set
  std::filesystem::path dir;  // variants/<name> in the run directory
  std::filesystem::path src;  // its materialized sources, variants/<name>/src
};

// A failed build (exit 1): its log in the run directory is the evidence, kept with the directory.
class BuildFailed : public Error {
 public:
  explicit BuildFailed(const std::string& what) : Error(what) {}
};

MaterializedVariant materialize_variant(const std::filesystem::path& repo,
                                        const VariantRequest& req,
                                        const std::filesystem::path& run_dir, std::ostream& log);

// Builds the variant (throws BuildFailed when its recipe fails) and describes its plugin.
Variant build_variant_in_run(MaterializedVariant m, const std::filesystem::path& run_dir,
                             const std::filesystem::path& cache_root,
                             const std::filesystem::path& worker, std::ostream& log);

// How to put back a built plugin replaced in a run directory (`plugin` relative to it) from the
// build cache of the run's runs root, when that still holds the bytes the plan hashed (`sha256`):
// "the build cache holds the plugin the plan hashed: restore it (cp <cached> <run>/<plugin>)",
// quoted for a shell; empty when it does not.
std::string restore_advice(const std::filesystem::path& run_dir, const std::string& plugin,
                           const std::string& sha256);

// What names a variant's plugin in a refusal: "the <name> Python plugin <module>.<entry> (under
// <interpreter>)", or "the <name> plugin <shared object>".
std::string plugin_label(const Plan& plan, const Variant& v);

// Runs `abharness-worker <args>` and parses its stdout as JSON (describe, probe, telemetry: the
// arguments come from model/worker_protocol.hpp).
json worker_json(const std::filesystem::path& worker, const std::vector<std::string>& args,
                 const std::filesystem::path& scratch_dir,
                 const std::map<std::string, std::string>& env = {});

// Runs a command to completion (or its timeout), its stdout and stderr in <tag>.out and <tag>.err
// of `scratch`, created afresh without following links.
ExitStatus run_into_scratch(const std::vector<std::string>& argv, const std::string& tag,
                            const RunDirFs& scratch, const std::map<std::string, std::string>& env,
                            double timeout_s);

// Runs a whole command line whose stdout is JSON; `what` names it in errors, `tag` its scratch
// files (<scratch_dir>/<tag>.out, .err).
json command_json(const std::vector<std::string>& argv, const std::string& what,
                  const std::string& tag, const std::filesystem::path& scratch_dir,
                  const std::map<std::string, std::string>& env = {});

}  // namespace abh
