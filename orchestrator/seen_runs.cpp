#include "seen_runs.hpp"

#include <filesystem>

#include "system/error.hpp"

namespace abh {

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
