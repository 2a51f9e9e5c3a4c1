#include "system/file_lock.hpp"

#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "system/eintr.hpp"
#include "system/error.hpp"

namespace abh {

FileLock::FileLock(const RunDirFs& dir, const std::filesystem::path& rel, Wait wait) {
  // In place (every process must lock the same inode), but never through a link: a lock file
  // that is a symbolic or hard link to a file elsewhere would be locked and written there.
  UniqueFd fd = dir.open_in_place(rel);
  const int op = LOCK_EX | (wait == Wait::no ? LOCK_NB : 0);
  if (retry_on_eintr([&] { return ::flock(fd.get(), op); }) != 0) {
    const int e = errno;
    if (e == EWOULDBLOCK && wait == Wait::no) return;
    throw Error("cannot lock " + dir.path(rel).string() + ": " + std::strerror(e));
  }
  fd_ = std::move(fd);
}

bool FileLock::held_elsewhere(const RunDirFs& dir, const std::filesystem::path& rel) {
  if (dir.kind(rel) != RunDirFs::Kind::file) return false;
  try {
    if (FileLock(dir, rel, Wait::no).held()) return false;
    // Held: by this very process (a command that locked its run directory, then asks), when the
    // pid its holder wrote in it (RunLock) is ours.
    return std::strtol(dir.read(rel, 64).c_str(), nullptr, 10) != ::getpid();
  } catch (const std::exception&) {
    return false;  // cannot be opened or locked: nobody is known to hold it
  }
}

}  // namespace abh
