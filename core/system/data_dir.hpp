// Where abharness finds its data files (data/gpus.json, data/models/*.json) at run time. The same
// binary is run from a build tree, from an install prefix and on a machine it was carried to, so
// the location is searched, and the search is reported when it fails instead of guessing.
#pragma once

#include <filesystem>
#include <string>

namespace abh {

// In order: $ABH_DATA_DIR (must exist when set: a typo is an error, not a fallback to another
// copy); <directory of the running executable>/../share/abharness/data; `compiled_fallback` (the
// source tree's data/ for a build-tree binary; may be empty). Throws UsageError listing every
// place it looked when none exists.
std::filesystem::path resolve_data_dir(const std::string& compiled_fallback);

}  // namespace abh
