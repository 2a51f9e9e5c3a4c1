#include "system/data_dir.hpp"

#include <cstdlib>

#include "system/error.hpp"

#if !defined(ABH_BUILD_TREE) || !defined(ABH_SOURCE_TREE) || !defined(ABH_BIN_TO_SHARE) || \
    !defined(ABH_BIN_TO_INCLUDE) || !defined(ABH_BIN_TO_CMAKE)
#error "core/CMakeLists.txt defines the layout of the build and of an install for this file"
#endif

namespace abh {
namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& dir, const fs::path& root) {
  const fs::path rel = dir.lexically_normal().lexically_relative(root.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

Layout layout_for(const fs::path& exe_dir, const fs::path& build_tree, const fs::path& source_tree,
                  const InstallPaths& install) {
  Layout l;
  if (inside(exe_dir, build_tree)) {
    l.build_tree = true;
    l.bin = build_tree / "bin";
    l.data = source_tree / "data";
    l.include = source_tree / "include";
    return l;
  }
  l.bin = exe_dir;
  l.data = (exe_dir / install.bin_to_share / "data").lexically_normal();
  l.include = (exe_dir / install.bin_to_include).lexically_normal();
  l.package = (exe_dir / install.bin_to_cmake).lexically_normal();
  return l;
}

const Layout& current_layout() {
  static const Layout layout = [] {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot read /proc/self/exe to find abharness's files: " + ec.message());
    std::error_code ec2;
    fs::path build = fs::weakly_canonical(ABH_BUILD_TREE, ec2);
    if (ec2) build = ABH_BUILD_TREE;
    return layout_for(exe.parent_path(), build, ABH_SOURCE_TREE,
                      {ABH_BIN_TO_SHARE, ABH_BIN_TO_INCLUDE, ABH_BIN_TO_CMAKE});
  }();
  return layout;
}

fs::path resolve_data_dir() {
  std::error_code ec;
  if (const char* env = std::getenv("ABH_DATA_DIR"); env && *env) {
    fs::path p(env);
    if (!fs::is_directory(p, ec))
      throw UsageError("ABH_DATA_DIR=" + p.string() +
                       " is not a directory: point it at abharness's data/ folder (the one holding "
                       "gpus.json and models/) or unset it");
    return p;
  }
  const Layout& l = current_layout();
  if (fs::is_directory(l.data, ec)) return l.data;
  throw UsageError("cannot find abharness's data directory (gpus.json, models/): " +
                   l.data.string() + " does not exist; " +
                   (l.build_tree ? "the source tree this build was made from has moved"
                                 : "this installation is incomplete (reinstall it, or bundle it "
                                   "with tools/relocatable.sh)") +
                   ", or set ABH_DATA_DIR to a data/ folder of the abharness sources");
}

fs::path resolve_include_dir() {
  if (const char* env = std::getenv("ABHARNESS_INCLUDE_DIR"); env && *env) return env;
  return current_layout().include;
}

}  // namespace abh
