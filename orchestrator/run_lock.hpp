// One orchestrator per run directory: an exclusive flock on <run>/.lock held for the life of the
// process. The kernel releases it when the process dies, even by SIGKILL, so a crash never leaves
// a stale lock behind.
#pragma once

#include <filesystem>
#include <string>

#include "system/file_lock.hpp"

namespace abh {

// Whether another process holds the run's lock now: a run or resume is measuring it.
bool run_is_live(const std::filesystem::path& run_dir);

class RunLock {
 public:
  // Throws UsageError naming the run directory when another process holds the lock.
  explicit RunLock(const std::filesystem::path& run_dir);
  // Locks `rel` inside `run_dir` (created when missing, never through a link); throws
  // UsageError("<busy>") when another process holds it.
  RunLock(const std::filesystem::path& run_dir, const std::filesystem::path& rel,
          const std::string& busy);

 private:
  FileLock lock_;
};

}  // namespace abh
