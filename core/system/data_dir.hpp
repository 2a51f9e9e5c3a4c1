// Where abharness finds its companions at run time: data/ (gpus.json, models/), the plugin ABI
// headers (abharness/plugin.h, substituted for ${ABHARNESS_INCLUDE} in recipes) and the worker.
// The same binary runs from its build tree, from an install prefix and from a bundle carried to
// another machine (tools/relocatable.sh), so the place is derived from the binary's own location:
//   - a binary inside the build tree it was built in uses the source tree's data/ and include/
//     and the build's bin/;
//   - any other binary uses the install layout around it (docs/install.md):
//     <bin>/abharness-worker, <bin>/../share/abharness/data, <bin>/../include, and the CMake
//     package that find_package(abharness) reads, <bin>/../lib/cmake/abharness.
// There is no fallback from one to the other: a broken install is reported, never patched over
// with a source tree that happens to exist on this machine.
#pragma once

#include <filesystem>
#include <string>

namespace abh {

struct Layout {
  std::filesystem::path bin;      // holds abharness and abharness-worker
  std::filesystem::path data;     // holds gpus.json and models/
  std::filesystem::path include;  // holds abharness/plugin.h
  // Holds abharnessConfig.cmake: what a recipe's find_package(abharness) is pointed at (as
  // abharness_DIR). Empty for a binary of the build tree, which has no installed package.
  std::filesystem::path package;
  bool build_tree = false;  // a binary of the build tree, not of an install
};

// The install's paths relative to its bin/ ("../share/abharness", "../include",
// "../lib/cmake/abharness").
struct InstallPaths {
  std::string bin_to_share, bin_to_include, bin_to_cmake;
};

// The layout of a binary in `exe_dir`, built in `build_tree` from `source_tree` (all absolute).
Layout layout_for(const std::filesystem::path& exe_dir, const std::filesystem::path& build_tree,
                  const std::filesystem::path& source_tree, const InstallPaths& install);

// The running binary's layout (/proc/self/exe and this build's compiled-in paths).
const Layout& current_layout();

// $ABH_DATA_DIR when set (it must be a directory: a typo is an error, not a fallback to another
// copy); else the layout's data directory, which must exist. Throws UsageError saying where it
// looked and how to fix it.
std::filesystem::path resolve_data_dir();

// $ABHARNESS_INCLUDE_DIR when set, else the layout's include directory: the folder holding
// abharness/plugin.h (not checked here: `abharness doctor` reports a missing header).
std::filesystem::path resolve_include_dir();

}  // namespace abh
