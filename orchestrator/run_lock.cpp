#include "run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "system/error.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {

RunLock::RunLock(const std::filesystem::path& run_dir)
    : RunLock(run_dir, ".lock",
              "another abharness is writing " + run_dir.string() +
                  ": wait for it to finish (or stop it) before running or resuming this run") {}

RunLock::RunLock(const std::filesystem::path& run_dir, const std::filesystem::path& rel,
                 const std::string& busy) {
  std::filesystem::path p = run_dir / rel;
  // In place (every process must lock the same inode), but never through a link: a lock file
  // that is a symbolic or hard link to a file elsewhere would be truncated and written there.
  fd_ = RunDirFs(run_dir).open_in_place(rel).release();
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK) throw UsageError(busy);
    throw Error("cannot lock " + p.string() + ": " + std::strerror(e));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0 && ::write(fd_, pid.data(), pid.size()) < 0) {
    // The pid is only a hint for humans; the flock is what excludes.
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace abh
