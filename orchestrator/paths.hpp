// Where the orchestrator finds its companions: the worker binary and the Python front end beside
// it, and the plugin ABI headers (the build tree's, or the install's around the binary:
// system/data_dir.hpp).
#pragma once

#include <filesystem>
#include <string>

namespace abh {

std::filesystem::path worker_binary();
std::filesystem::path plugin_include_dir();
// The Python front end's script installed beside `worker` (model/worker_protocol.hpp).
std::filesystem::path python_front_end(const std::filesystem::path& worker);
// Refuses (UsageError naming `option`) an output path inside a run directory (one holding
// plan.json, at `out` or above it): what a command writes there could replace the run's own files
// (`export -o runs/r/plan.json`) or pass for its reports. `own_run`, when given, may be `out`
// itself: `report --out` naming the run it reports on.
void refuse_output_in_run(const std::filesystem::path& out, const std::string& option,
                          const std::filesystem::path& own_run = {});
// A directory given on the command line as one absolute path: `.`, `repo/` and `/abs/repo` name
// the same repository, so they must read the same (no trailing separator).
std::filesystem::path absolute_dir(const std::filesystem::path& given);
// The build cache of the runs in `runs_root`; a run directory's runs root is its parent.
std::filesystem::path build_cache_root(const std::filesystem::path& runs_root);

}  // namespace abh
