// The runs a command over finished runs (`compare`, `history`) was given, told apart by directory
// and plan nonce, not by run id: runs on different machines may have the same id (each CI job
// names its own), while the same directory given twice, or a copy of one run (same nonce), would
// put one measurement beside itself as if it were two.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/plan.hpp"

namespace abh {

// The run directories among `given` (a shell glob such as runs/* names everything in a runs root):
// a bisect directory, and a directory with neither plan.json nor results/ (not a run, or a start
// that failed), are left out, each named on stderr with why. A directory with results/ but no plan
// stays, so that loading it refuses the run and says how to restore its plan. The runs are given
// back as paths without "." parts or a trailing slash, as labels read best.
std::vector<std::string> run_dirs_among(const std::vector<std::string>& given,
                                        const std::string& command);

class SeenRuns {
 public:
  // `command` names the command in the errors ("compare", "history").
  explicit SeenRuns(std::string command) : command_(std::move(command)) {}
  // Throws UsageError naming both directories when `dir` is a run already added, by its canonical
  // path or by its plan's nonce.
  void add(const std::string& dir, const Plan& plan);

 private:
  std::string command_;
  std::map<std::string, std::string> dirs_, nonces_;  // canonical dir / nonce -> dir as given
};

}  // namespace abh
