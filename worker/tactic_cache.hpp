// Tactic choice: when a plugin offers several tactics (e.g. cuBLASLt's heuristic candidates) and
// the settings say "auto", the worker times each candidate and keeps the fastest. The choice is
// cached in a file whose key carries a schema version, the library versions, the GPU and the
// source identity, so a stale or foreign entry is rejected and re-tuned, never loaded.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "plugin.hpp"
#include "system/run_dir_fs.hpp"
#include "timer.hpp"

namespace abh::worker {

struct TacticContext {
  // The cache file, relative to the run directory `run` (reached without following links);
  // no run or an empty path: no cache.
  const RunDirFs* run = nullptr;
  std::filesystem::path cache_file;
  std::string cache_key;  // everything the choice depends on, hashed
};

struct TacticChoice {
  std::string key;
  std::string how;  // "only tactic", "tuned over 8 candidates", "cache hit (<file>)", "requested"
};

TacticChoice choose_tactic(Problem& problem, Timer& timer, const SampleHooks& hooks, void* stream,
                           const std::string& requested, const TacticContext& ctx);

}  // namespace abh::worker
