#include "measuring_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>

#include "model/launch.hpp"
#include "model/timing.hpp"
#include "system/eintr.hpp"

namespace abh {
namespace fs = std::filesystem;

fs::path measuring_lock_dir() {
  const char* env = std::getenv("ABH_LOCK_DIR");
  return env && *env ? fs::path(env) : fs::path("/tmp/abharness-locks");
}

std::vector<std::string> measuring_lock_names(const Plan& plan) {
  std::set<std::string> names;
  bool gpu_lane = false;
  for (const Task& t : plan.tasks) {
    const Environment* lane = t.gpu >= 0 && static_cast<std::size_t>(t.gpu) < plan.machine.size()
                                  ? &plan.machine[t.gpu]
                                  : nullptr;
    if (lane && lane->gpu && !lane->gpu->uuid.empty()) {
      names.insert("gpu-" + lane->gpu->uuid);
      gpu_lane = true;
    } else if (!t.cpus.empty()) {
      names.insert("cpu-" + std::to_string(t.cpus.front()));
      names.insert(kHostLock);
    }
  }
  // Host-inclusive time on a GPU is the host's to disturb as much as a CPU measurement is.
  if (gpu_lane && std::any_of(plan.shapes.begin(), plan.shapes.end(),
                              [](const Shape& s) { return s.timing == kTimingLaunch; }))
    names.insert(kHostLock);
  return {names.begin(), names.end()};
}

namespace {

// The shared directory, sticky and writable by all like /tmp, never through a link.
bool open_dir(const fs::path& dir, std::string& why) {
  if (::mkdir(dir.c_str(), 01777) == 0) {
    ::chmod(dir.c_str(), 01777);  // past the umask: every user's runs lock here
    return true;
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    why = dir.string() + " is not a directory (or cannot be made: " + std::strerror(errno) + ")";
    return false;
  }
  return true;
}

// What a lock guards, as a message says it.
std::string guarded_by(const std::string& name) {
  return name == kHostLock ? "this machine's CPUs" : name;
}

// The lock file `name` in `dir`, opened (created for everyone) without following a link; an
// invalid descriptor, with the reason said loudly, when it cannot be.
UniqueFd open_lock(const fs::path& dir, const std::string& name, const std::string& unguarded) {
  const fs::path path = dir / (name + ".lock");
  int raw = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (raw < 0 && errno == EACCES) raw = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (raw < 0) {
    std::cerr << "abharness: WARNING: cannot open the lock " << path.string() << ": "
              << std::strerror(errno) << ": " << unguarded << "\n";
    return UniqueFd();
  }
  UniqueFd fd(raw);
  ::fchmod(fd.get(), 0666);  // another user's run must be able to open it too
  return fd;
}

// Who holds a lock and what it does there, as its holder wrote them (claim): "run <dir> (pid N)",
// then "measuring" or "building".
struct Holder {
  std::string who = "another abharness";
  std::string doing = "measuring";
};

Holder holder_of(int fd) {
  char buf[512] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::istringstream text(n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "");
  Holder h;
  std::string line;
  if (std::getline(text, line) && !line.empty()) h.who = line;
  if (std::getline(text, line) && !line.empty()) h.doing = line;
  return h;
}

// Writes who holds the lock now, for the message of the next run that waits for it; the flock is
// what excludes, so a failed write costs only that message.
void claim(int fd, const fs::path& run_dir, const char* doing) {
  const std::string me =
      "run " + run_dir.string() + " (pid " + std::to_string(::getpid()) + ")\n" + doing + "\n";
  if (::ftruncate(fd, 0) != 0) return;
  [[maybe_unused]] const ssize_t written = ::pwrite(fd, me.data(), me.size(), 0);
}

// Takes `fd`'s flock in `mode`, first without waiting; when another process holds it, says whom
// this waits for (`until` ends the sentence) and waits. False, said loudly, when it cannot wait.
bool take(int fd, int mode, const std::string& name, const std::string& until,
          const std::string& unguarded) {
  if (retry_on_eintr([&] { return ::flock(fd, mode | LOCK_NB); }) == 0) return true;
  const Holder h = holder_of(fd);
  std::cerr << "abharness: waiting for " << h.who << ", which is " << h.doing << " on "
            << guarded_by(name) << "; " << until << "\n";
  if (retry_on_eintr([&] { return ::flock(fd, mode); }) == 0) return true;
  std::cerr << "abharness: WARNING: cannot wait for the lock " << name << ": "
            << std::strerror(errno) << ": " << unguarded << "\n";
  return false;
}

constexpr const char* kUnmeasured =
    "another run on this machine could measure beside this one unnoticed";

}  // namespace

MeasuringLocks::MeasuringLocks(const Plan& plan, const fs::path& run_dir, const fs::path& dir) {
  const std::vector<std::string> names = measuring_lock_names(plan);
  if (names.empty()) return;
  std::string why;
  if (!open_dir(dir, why)) {
    std::cerr << "abharness: WARNING: cannot take the measuring locks (" << why
              << "): " << kUnmeasured << "\n";
    return;
  }
  for (const std::string& name : names) {
    UniqueFd fd = open_lock(dir, name, kUnmeasured);
    if (!fd.valid() || !take(fd.get(), LOCK_EX, name, "this run measures when it has finished",
                             "this run measures beside the one that holds it"))
      continue;
    claim(fd.get(), run_dir, "measuring");
    held_.push_back(std::move(fd));
  }
}

BuildingLock::BuildingLock(const fs::path& run_dir, const fs::path& dir) {
  constexpr const char* unguarded = "this build could load a measurement on this machine";
  std::string why;
  if (!open_dir(dir, why)) {
    std::cerr << "abharness: WARNING: cannot take the building lock (" << why << "): " << unguarded
              << "\n";
    return;
  }
  UniqueFd fd = open_lock(dir, kHostLock, unguarded);
  if (fd.valid() && take(fd.get(), LOCK_SH, kHostLock,
                         "this run builds when it has finished (a compile beside it would load "
                         "its measurement)",
                         "this build runs beside that measurement")) {
    claim(fd.get(), run_dir, "building");
    held_ = std::move(fd);
  }
}

std::optional<MeasuringLocks> measuring_locks_for(const Plan& plan, const fs::path& run_dir) {
  if (launcher_places_lanes(plan.launcher)) return std::nullopt;
  return std::optional<MeasuringLocks>(std::in_place, plan, run_dir);
}

}  // namespace abh
