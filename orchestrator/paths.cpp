#include "paths.hpp"

#include "system/data_dir.hpp"
#include "system/error.hpp"

namespace abh {
namespace fs = std::filesystem;

fs::path worker_binary() {
  const Layout& l = current_layout();
  fs::path w = l.bin / "abharness-worker";
  if (!fs::exists(w))
    throw Error("the worker binary is missing: expected " + w.string() +
                (l.build_tree ? " (build the 'abharness-worker' target)"
                              : " beside abharness (reinstall, or rebuild the bundle)"));
  return w;
}

fs::path plugin_include_dir() {
  return resolve_include_dir();
}

}  // namespace abh
