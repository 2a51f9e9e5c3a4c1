#include "paths.hpp"

#include <cstdlib>

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

fs::path plugin_include_dir() {
  if (const char* env = std::getenv("ABHARNESS_INCLUDE_DIR")) return env;
  for (fs::path p : {self_dir() / "include", self_dir().parent_path() / "include"})
    if (fs::exists(p / "abharness" / "plugin.h")) return p;
  return ABH_INCLUDE_DIR;
}

}  // namespace abh
