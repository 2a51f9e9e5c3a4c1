// Turns a requested revision into a built, described variant inside the run directory:
// materialize (never touching the user's checkout), build with the manifest's recipe (or reuse a
// cached build), then ask a worker what the built plugin is (device, library versions). A Python
// plugin is its materialized sources (plus whatever its optional build step made there): it is
// described by its manifest, never imported here, so a module that does not import fails its
// arms, not the plan.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>

#include "model/plan.hpp"

namespace abh {

struct VariantRequest {
  std::string name;  // baseline | candidate
  SourceIdentity source;
  std::string target;  // manifest plugin key
};

Variant prepare_variant(const std::filesystem::path& repo, const VariantRequest& req,
                        const std::filesystem::path& run_dir,
                        const std::filesystem::path& cache_root,
                        const std::filesystem::path& worker, std::ostream& log);

// Runs `abharness-worker <args>` and parses its stdout as JSON (describe, probe, telemetry: the
// arguments come from model/worker_protocol.hpp).
json worker_json(const std::filesystem::path& worker, const std::vector<std::string>& args,
                 const std::filesystem::path& scratch_dir,
                 const std::map<std::string, std::string>& env = {});

// Runs a whole command line whose stdout is JSON; `what` names it in errors, `tag` its scratch
// files (<scratch_dir>/<tag>.out, .err).
json command_json(const std::vector<std::string>& argv, const std::string& what,
                  const std::string& tag, const std::filesystem::path& scratch_dir,
                  const std::map<std::string, std::string>& env = {});

}  // namespace abh
