// What an interrupted run says on its way out. Ctrl-C (SIGINT), SIGTERM and SIGHUP still end the
// orchestrator at once, with the signal's own status (its workers follow it: they asked the kernel
// to kill them when it dies), but first it prints the command that measures the rest: every result
// already written stays valid, and a user who stopped a sweep should not have to look up how to
// go on.
#pragma once

#include <csignal>
#include <filesystem>

namespace abh {

class InterruptHint {
 public:
  // What the run had done: planning (building, before its plan is written: nothing measured, the
  // directory is to be removed) or measuring (resume measures the rest).
  enum class Stage { planning, measuring };
  // From now until destruction, those signals print the hint for `run_dir` before they end the
  // process. One at a time per process.
  explicit InterruptHint(const std::filesystem::path& run_dir, Stage stage = Stage::measuring);
  ~InterruptHint();
  InterruptHint(const InterruptHint&) = delete;
  InterruptHint& operator=(const InterruptHint&) = delete;

 private:
  struct sigaction before_[3];
};

}  // namespace abh
