// An exclusive flock on a file of a run directory, held for the life of the object. The kernel
// releases it when the process dies, even by SIGKILL, so a crash never leaves a stale lock. The
// orchestrator's run lock (one writer per run) tries it once; a worker's turn to open its GPU
// (worker/arm.cpp) waits for it.
#pragma once

#include <filesystem>

#include "system/run_dir_fs.hpp"
#include "system/unique_fd.hpp"

namespace abh {

class FileLock {
 public:
  // Whether another process holds the lock on `rel` inside `dir` now: false when the file does
  // not exist (nothing is created), is not a regular file, or names this process as its holder
  // (the pid RunLock writes into it).
  static bool held_elsewhere(const RunDirFs& dir, const std::filesystem::path& rel);
  enum class Wait { no, yes };
  // Locks `rel` inside `dir` (created when missing, never through a link). Wait::yes blocks until
  // the lock is free; Wait::no returns at once, holding nothing when another holds it.
  FileLock(const RunDirFs& dir, const std::filesystem::path& rel, Wait wait);
  bool held() const { return fd_.valid(); }
  // The locked file's descriptor, while held.
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
};

}  // namespace abh
