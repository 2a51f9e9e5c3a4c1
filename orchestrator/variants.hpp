// Turns a requested revision into a built, described variant inside the run directory:
// materialize (never touching the user's checkout), build with the manifest's recipe (or reuse a
// cached build), then ask a worker what the built plugin is (device, library versions).
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

}  // namespace abh
