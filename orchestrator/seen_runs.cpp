#include "seen_runs.hpp"

#include <filesystem>
#include <iostream>

#include "bisect/spec.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

std::vector<std::string> run_dirs_among(const std::vector<std::string>& given,
                                        const std::string& command) {
  std::vector<std::string> runs;
  for (const std::string& dir : given) {
    std::error_code ec;
    std::string why;
    if (bisect::is_bisect_dir(dir))
      why = "a bisect directory (its probes are runs under " + (fs::path(dir) / "probes").string() +
            ")";
    else if (fs::is_directory(dir, ec) && !fs::exists(fs::path(dir) / kPlanFile, ec) &&
             !fs::exists(fs::path(dir) / "results", ec))
      why = "it holds neither plan.json nor results/ (not a run, or a start that failed)";
    // As a label, the path without "." parts or a trailing slash: runs/r2/. reads runs/r2.
    std::string tidy = fs::path(dir).lexically_normal().string();
    while (tidy.size() > 1 && tidy.back() == '/') tidy.pop_back();
    if (why.empty())
      runs.push_back(tidy);
    else
      std::cerr << "abharness: " << command << ": left out " << printable(dir) << ": " << why
                << "\n";
  }
  return runs;
}

void SeenRuns::add(const std::string& dir, const Plan& plan) {
  const std::string where = std::filesystem::weakly_canonical(dir).string();
  if (auto [it, fresh] = dirs_.emplace(where, dir); !fresh)
    throw UsageError(command_ + ": " + dir + " and " + it->second +
                     " are the same run directory (" + where + "): give each run once");
  if (auto [it, fresh] = nonces_.emplace(plan.run_nonce, dir); !fresh)
    throw UsageError(command_ + ": " + dir + " and " + it->second +
                     " are copies of one run (the same run nonce " + plan.run_nonce +
                     " in plan.json): give each run once");
}

}  // namespace abh
