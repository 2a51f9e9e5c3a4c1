#include "paths.hpp"

#include "model/worker_protocol.hpp"
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

fs::path python_front_end(const fs::path& worker) {
  return worker.parent_path() / worker_protocol::kPythonFrontEnd;
}

fs::path plugin_include_dir() {
  const fs::path dir = resolve_include_dir();
  std::error_code ec;
  if (!fs::is_regular_file(dir / "abharness" / "plugin.h", ec))
    throw Error("the plugin headers are missing: expected " +
                (dir / "abharness/plugin.h").string() +
                (current_layout().build_tree
                     ? ""
                     : " (an installed abharness finds them in ../include beside its bin/: "
                       "reinstall, rebuild the bundle, or set ABHARNESS_INCLUDE_DIR)"));
  return dir;
}

fs::path absolute_dir(const fs::path& given) {
  fs::path p = fs::absolute(given).lexically_normal();
  return p.has_filename() || p == p.root_path() ? p : p.parent_path();
}

fs::path build_cache_root(const fs::path& runs_root) {
  return runs_root / ".cache" / "builds";
}

void refuse_output_in_run(const fs::path& out, const std::string& option, const fs::path& own_run) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(out), ec);
  if (ec) return;  // a path that cannot be resolved fails when written, with its own reason
  for (fs::path dir = target; !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "plan.json", ec)) {
      if (!own_run.empty() && dir == target && fs::equivalent(dir, own_run, ec)) return;
      throw UsageError(option + " " + out.string() + ": it is inside the run directory " +
                       dir.string() +
                       ", which holds only what its run writes (a file written there could "
                       "replace the run's own, or pass for its reports): name a path outside it");
    }
    if (dir == dir.root_path()) break;
  }
}

}  // namespace abh
