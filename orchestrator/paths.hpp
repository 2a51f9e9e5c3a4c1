// Where the orchestrator finds its companions: the worker binary and the Python front end beside
// it, and the plugin ABI headers (the build tree's, or the install's around the binary:
// system/data_dir.hpp).
#pragma once

#include <filesystem>

namespace abh {

std::filesystem::path worker_binary();
std::filesystem::path plugin_include_dir();
// The Python front end's script installed beside `worker` (model/worker_protocol.hpp).
std::filesystem::path python_front_end(const std::filesystem::path& worker);
// The build cache of the runs in `runs_root`; a run directory's runs root is its parent.
std::filesystem::path build_cache_root(const std::filesystem::path& runs_root);

}  // namespace abh
