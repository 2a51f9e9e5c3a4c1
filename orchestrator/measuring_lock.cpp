#include "measuring_lock.hpp"

#include <fcntl.h>
#include <signal.h>
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
#include "system/text.hpp"

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

// Who holds a lock and what it does there, as its holders wrote them (claim): per holder a line
// "run <dir> (pid N)", then one "measuring" or "building". A shared lock has several.
struct Holder {
  std::string who;
  std::string doing;
  pid_t pid = 0;
};

// The holders written in the lock file whose process still lives: a holder that has released a
// shared lock leaves its lines behind, and is not named as one still holding it.
std::vector<Holder> live_holders(int fd) {
  char buf[4096] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::istringstream text(n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "");
  std::vector<Holder> out;
  for (Holder h; std::getline(text, h.who) && std::getline(text, h.doing);) {
    const auto at = h.who.rfind("(pid ");
    h.pid = at == std::string::npos ? 0 : std::atoi(h.who.c_str() + at + 5);
    if (h.pid > 0 && (::kill(h.pid, 0) == 0 || errno == EPERM)) out.push_back(h);
  }
  return out;
}

// "run A (pid 1), which is measuring" for one holder; "run A (pid 1), measuring, and run B (pid
// 2), building," for several; "another abharness, which is measuring" when none is named.
std::string holders_text(const std::vector<Holder>& holders) {
  if (holders.empty()) return "another abharness, which is measuring";
  if (holders.size() == 1) return holders[0].who + ", which is " + holders[0].doing;
  std::vector<std::string> each;
  for (const Holder& h : holders) each.push_back(h.who + ", " + h.doing);
  return join(each, ", and ") + ",";
}

// Writes who holds the lock now, for the message of the next run that waits for it: alone for an
// exclusive lock, after the other live holders for a shared one. The flock is what excludes, so
// a failed write (or two sharers writing at once) costs only that message.
void claim(int fd, const fs::path& run_dir, const char* doing, bool shared) {
  std::string text;
  if (shared)
    for (const Holder& h : live_holders(fd))
      if (h.pid != ::getpid()) text += h.who + "\n" + h.doing + "\n";
  text += "run " + run_dir.string() + " (pid " + std::to_string(::getpid()) + ")\n" + doing + "\n";
  if (::ftruncate(fd, 0) != 0) return;
  [[maybe_unused]] const ssize_t written = ::pwrite(fd, text.data(), text.size(), 0);
}

// Takes `fd`'s flock in `mode`, first without waiting; when another process holds it, says whom
// this waits for (`until` ends the sentence) and waits. False, said loudly, when it cannot wait.
bool take(int fd, int mode, const std::string& name, const std::string& until,
          const std::string& unguarded) {
  if (retry_on_eintr([&] { return ::flock(fd, mode | LOCK_NB); }) == 0) return true;
  std::cerr << "abharness: waiting for " << holders_text(live_holders(fd)) << " on "
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
    // Shared with --share-host: other runs sharing it measure beside this one, a compile too,
    // but not a run that holds the host alone.
    const int mode = name == kHostLock && plan.schedule.share_host ? LOCK_SH : LOCK_EX;
    UniqueFd fd = open_lock(dir, name, kUnmeasured);
    if (!fd.valid() || !take(fd.get(), mode, name, "this run measures when it has finished",
                             "this run measures beside the one that holds it"))
      continue;
    claim(fd.get(), run_dir, "measuring", mode == LOCK_SH);
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
    claim(fd.get(), run_dir, "building", true);
    held_ = std::move(fd);
  }
}

std::optional<MeasuringLocks> measuring_locks_for(const Plan& plan, const fs::path& run_dir) {
  if (launcher_places_lanes(plan.launcher)) return std::nullopt;
  return std::optional<MeasuringLocks>(std::in_place, plan, run_dir);
}

}  // namespace abh
