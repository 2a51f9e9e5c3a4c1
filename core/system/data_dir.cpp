#include "system/data_dir.hpp"

#include <cstdlib>
#include <vector>

#include "system/error.hpp"

namespace abh {
namespace fs = std::filesystem;

fs::path resolve_data_dir(const std::string& compiled_fallback) {
  if (const char* env = std::getenv("ABH_DATA_DIR"); env && *env) {
    fs::path p(env);
    std::error_code ec;
    if (!fs::is_directory(p, ec))
      throw UsageError("ABH_DATA_DIR=" + p.string() +
                       " is not a directory: point it at abharness's data/ folder (the one holding "
                       "gpus.json and models/) or unset it");
    return p;
  }
  std::vector<fs::path> tried;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) tried.push_back(exe.parent_path().parent_path() / "share" / "abharness" / "data");
  if (!compiled_fallback.empty()) tried.emplace_back(compiled_fallback);
  for (const auto& p : tried)
    if (fs::is_directory(p, ec)) return p;
  std::string msg = "cannot find abharness's data directory (gpus.json, models/); looked in:";
  for (const auto& p : tried) msg += " " + p.string();
  throw UsageError(msg + ". Set ABH_DATA_DIR to the data/ folder of the abharness sources");
}

}  // namespace abh
