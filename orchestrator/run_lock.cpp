#include "run_lock.hpp"

#include <unistd.h>

#include <string>

#include "system/error.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {

bool run_is_live(const std::filesystem::path& run_dir) {
  return FileLock::held_elsewhere(RunDirFs(run_dir), ".lock");
}

RunLock::RunLock(const std::filesystem::path& run_dir)
    : RunLock(run_dir, ".lock",
              "another abharness is writing " + run_dir.string() +
                  ": wait for it to finish (or stop it) before running or resuming this run") {}

RunLock::RunLock(const std::filesystem::path& run_dir, const std::filesystem::path& rel,
                 const std::string& busy)
    : lock_(RunDirFs(run_dir), rel, FileLock::Wait::no) {
  if (!lock_.held()) throw UsageError(busy);
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_.fd(), 0) == 0 && ::write(lock_.fd(), pid.data(), pid.size()) < 0) {
    // The pid is only a hint for humans; the flock is what excludes.
  }
}

}  // namespace abh
