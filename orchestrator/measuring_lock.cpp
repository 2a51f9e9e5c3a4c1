#include "measuring_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

#include "model/launch.hpp"
#include "system/eintr.hpp"

namespace abh {
namespace fs = std::filesystem;

fs::path measuring_lock_dir() {
  const char* env = std::getenv("ABH_LOCK_DIR");
  return env && *env ? fs::path(env) : fs::path("/tmp/abharness-locks");
}

std::vector<std::string> measuring_lock_names(const Plan& plan) {
  std::set<std::string> names;
  for (const Task& t : plan.tasks) {
    const Environment* lane = t.gpu >= 0 && static_cast<std::size_t>(t.gpu) < plan.machine.size()
                                  ? &plan.machine[t.gpu]
                                  : nullptr;
    if (lane && lane->gpu && !lane->gpu->uuid.empty())
      names.insert("gpu-" + lane->gpu->uuid);
    else if (!t.cpus.empty())
      names.insert("cpu-" + std::to_string(t.cpus.front()));
  }
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

std::string holder_of(int fd) {
  char buf[512] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s.empty() ? "another abharness" : s;
}

}  // namespace

MeasuringLocks::MeasuringLocks(const Plan& plan, const fs::path& run_dir, const fs::path& dir) {
  const std::vector<std::string> names = measuring_lock_names(plan);
  if (names.empty()) return;
  std::string why;
  if (!open_dir(dir, why)) {
    std::cerr << "abharness: WARNING: cannot take the measuring locks (" << why
              << "): another run on this machine could measure beside this one unnoticed\n";
    return;
  }
  for (const std::string& name : names) {
    const fs::path path = dir / (name + ".lock");
    int raw = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (raw < 0 && errno == EACCES) raw = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (raw < 0) {
      std::cerr << "abharness: WARNING: cannot open the measuring lock " << path.string() << ": "
                << std::strerror(errno)
                << ": another run on this machine could measure beside this one unnoticed\n";
      continue;
    }
    UniqueFd fd(raw);
    ::fchmod(fd.get(), 0666);  // another user's run must be able to open it too
    if (retry_on_eintr([&] { return ::flock(fd.get(), LOCK_EX | LOCK_NB); }) != 0) {
      std::cerr << "abharness: waiting for " << holder_of(fd.get()) << ", which is measuring on "
                << name << "; this run measures when it has finished\n";
      if (retry_on_eintr([&] { return ::flock(fd.get(), LOCK_EX); }) != 0) {
        std::cerr << "abharness: WARNING: cannot wait for the measuring lock " << path.string()
                  << ": " << std::strerror(errno)
                  << ": this run measures beside the one that holds it\n";
        continue;
      }
    }
    const std::string me =
        "run " + run_dir.string() + " (pid " + std::to_string(::getpid()) + ")\n";
    if (::ftruncate(fd.get(), 0) == 0 && ::pwrite(fd.get(), me.data(), me.size(), 0) < 0) {
      // Who holds it is a hint for the next run's message; the flock is what excludes.
    }
    held_.push_back(std::move(fd));
  }
}

std::optional<MeasuringLocks> measuring_locks_for(const Plan& plan, const fs::path& run_dir) {
  if (launcher_places_lanes(plan.launcher)) return std::nullopt;
  return std::optional<MeasuringLocks>(std::in_place, plan, run_dir);
}

}  // namespace abh
