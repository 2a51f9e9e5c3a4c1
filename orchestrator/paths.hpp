// Where the orchestrator finds its companions: the worker binary and the plugin ABI headers (the
// build tree's, or the install's around the binary: system/data_dir.hpp).
#pragma once

#include <filesystem>

namespace abh {

std::filesystem::path worker_binary();
std::filesystem::path plugin_include_dir();

}  // namespace abh
