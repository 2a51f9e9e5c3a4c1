// Where the orchestrator finds its companions: the worker binary beside it and the plugin ABI
// headers (beside it in a relocatable install, else the source tree it was built from).
#pragma once

#include <filesystem>

namespace abh {

std::filesystem::path self_dir();
std::filesystem::path worker_binary();
std::filesystem::path plugin_include_dir();

}  // namespace abh
