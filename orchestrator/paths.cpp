#include "paths.hpp"

#include <cstdlib>

#include "model/worker_protocol.hpp"
#include "system/error.hpp"

namespace abh {
namespace fs = std::filesystem;

fs::path self_dir() {
  return fs::canonical("/proc/self/exe").parent_path();
}

fs::path worker_binary() {
  fs::path w = self_dir() / "abharness-worker";
  if (!fs::exists(w))
    throw Error("the worker binary is missing: expected " + w.string() +
                " beside abharness (build the 'abharness-worker' target or reinstall)");
  return w;
}

fs::path python_launcher(const fs::path& worker) {
  return worker.parent_path() / worker_protocol::kPythonLauncher;
}

fs::path plugin_include_dir() {
  if (const char* env = std::getenv("ABHARNESS_INCLUDE_DIR")) return env;
  for (fs::path p : {self_dir() / "include", self_dir().parent_path() / "include"})
    if (fs::exists(p / "abharness" / "plugin.h")) return p;
  return ABH_INCLUDE_DIR;
}

}  // namespace abh
