#include "system/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/start_dir.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>

#include "system/error.hpp"

namespace abh {
namespace fs = std::filesystem;
namespace bp = boost::process;

// Test hook: forces the waitid polling loop that is used where pidfd_open is unavailable (kernels
// before 5.3, or container seccomp profiles that refuse it), so that path is tested too.
namespace process_detail {
std::atomic<bool> force_polling_wait{false};
}  // namespace process_detail

namespace {

using Clock = std::chrono::steady_clock;

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

std::string errno_text(int err) {
  return std::strerror(err);
}

// Descriptors handed to the child must not be 0, 1 or 2: if the parent runs with a standard stream
// closed, open() can return one of them and the dup2 sequence in the child would then overwrite a
// descriptor it still has to copy from.
UniqueFd above_stdio(UniqueFd fd, const std::string& what) {
  if (fd.get() > 2) return fd;
  int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    throw Error("cannot duplicate the descriptor for " + what + ": " + errno_text(errno));
  return UniqueFd(moved);
}

UniqueFd open_output(const fs::path& path, const std::string& stream) {
  if (path.empty()) {
    UniqueFd fd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) throw Error("cannot open /dev/null for " + stream + ": " + errno_text(errno));
    return above_stdio(std::move(fd), stream);
  }
  // O_TRUNC here is the point: Boost's `std_out > path` appends to what an earlier run left.
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0)
    throw Error("cannot open " + path.string() + " for the child's " + stream + ": " +
                errno_text(errno));
  return above_stdio(std::move(fd), stream + " (" + path.string() + ")");
}

bool same_file(int a, int b) {
  struct stat sa {
  }, sb{};
  if (::fstat(a, &sa) != 0 || ::fstat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
}

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

fs::path search_path(const std::string& name, const std::string& path_var) {
  if (name.empty()) throw Error("cannot run a program with an empty name (argv[0] is empty)");
  if (name.find('/') != std::string::npos) return name;
  size_t start = 0;
  while (start <= path_var.size()) {
    size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    std::string dir = path_var.substr(start, end - start);
    // An empty PATH entry means the current directory (POSIX); keep that meaning.
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  throw Error("program '" + name + "' was not found in PATH (" +
              (path_var.empty() ? std::string("PATH is empty") : path_var) +
              "): install it, put its directory on PATH, or give its full path");
}

std::string current_path_var() {
  const char* p = std::getenv("PATH");
  return p ? p : "";
}

// The executable that execve will run: absolute, so the child's chdir does not change what a
// relative name means between this check and the exec.
fs::path resolve_executable(const SpawnSpec& spec) {
  auto it = spec.env.find("PATH");
  std::string path_var = it != spec.env.end() ? it->second : current_path_var();
  fs::path exe = search_path(spec.argv[0], path_var);
  if (exe.is_relative())
    exe = (spec.cwd.empty() ? fs::current_path() : fs::absolute(spec.cwd)) / exe;
  if (!is_executable_file(exe))
    throw Error("cannot run '" + spec.argv[0] + "': " + exe.string() +
                " is not an executable regular file");
  return exe;
}

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// Blocks until the child is a zombie (exited, not yet reaped) or the deadline passes. The zombie
// is left in place on purpose: while it exists its pid, and so its process group id, cannot be
// reused, so the kill(-pgid) that follows can only reach our own group.
bool wait_exited(pid_t pid, std::optional<Clock::time_point> deadline) {
  UniqueFd pidfd;
  if (!process_detail::force_polling_wait.load()) pidfd = UniqueFd(pidfd_open(pid));
  if (pidfd.get() >= 0) {
    for (;;) {
      struct pollfd pfd {
        pidfd.get(), POLLIN, 0
      };
      timespec ts{};
      timespec* tsp = nullptr;
      if (deadline) {
        auto left = *deadline - Clock::now();
        if (left <= Clock::duration::zero()) return false;
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        ts.tv_sec = static_cast<time_t>(ns / 1000000000);
        ts.tv_nsec = static_cast<long>(ns % 1000000000);
        tsp = &ts;
      }
      int r = ::ppoll(&pfd, 1, tsp, nullptr);
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) throw Error("ppoll on pidfd: " + errno_text(errno));
    }
  }
  // Polling fallback at 1 ms: the same zombie-preserving waitid, only without a wakeup from the
  // kernel.
  for (;;) {
    siginfo_t info{};
    int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r < 0 && errno != EINTR) throw Error("waitid: " + errno_text(errno));
    if (r == 0 && info.si_pid == pid) return true;
    if (deadline && Clock::now() >= *deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int reap(pid_t pid) {
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, 0);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR)
      throw Error("waitpid(" + std::to_string(pid) + "): " + errno_text(errno));
  }
}

void kill_group(pid_t pid) {
  // ESRCH (group already empty) and EPERM (a member changed credentials) cannot be acted on
  // here; the direct child is also signalled by pid in case it left the group itself.
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

// Everything the forked child does before execve. Only async-signal-safe calls: the parent may
// have other threads, whose locks the child inherits in whatever state fork found them.
struct ChildSetup {
  int in_fd, out_fd, err_fd;
  unsigned max_fd;  // for the fallback when close_range is unavailable (kernels before 5.11)

  template <typename Exec>
  [[noreturn]] static void fail(Exec& exec, const char* what) {
    exec.set_error(std::error_code(errno, std::system_category()), what);
    ::_exit(127);
  }

  template <typename Exec>
  void operator()(Exec& exec) const {
    // Our own process group, so a timeout can kill everything the child starts.
    if (::setpgid(0, 0) != 0) fail(exec, "setpgid(0, 0) in the child");
    const int fds[3] = {in_fd, out_fd, err_fd};
    for (int target = 0; target < 3; ++target)
      if (::dup2(fds[target], target) < 0) fail(exec, "dup2 of a standard stream in the child");
    // A blocked signal mask and an ignored SIGPIPE survive execve; neither is the child's business.
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGPIPE, &dfl, nullptr);
    // Descriptors other threads opened without O_CLOEXEC (a run-directory lock, another spawn's
    // pipe) must not leak into a worker that may outlive them. Marking them close-on-exec instead
    // of closing keeps Boost's exec-error pipe working until the exec itself.
    if (::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
      for (unsigned fd = 3; fd < max_fd; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }
};

}  // namespace

std::string ExitStatus::describe() const {
  char buf[64];
  switch (kind) {
    case Kind::exited:
      return "exit code " + std::to_string(code);
    case Kind::signaled: {
      const char* abbrev = ::sigabbrev_np(signal);
      std::string s = "killed by signal " + std::to_string(signal);
      if (abbrev) s += std::string(" (SIG") + abbrev + ")";
      return s;
    }
    case Kind::timed_out:
      std::snprintf(buf, sizeof buf, "%.1f", wall_s);
      return std::string("timed out after ") + buf + " s (process group killed)";
  }
  return "unknown exit status";
}

fs::path find_program(const std::string& name) {
  fs::path p = search_path(name, current_path_var());
  if (!is_executable_file(p))
    throw Error("program '" + name + "' is not an executable regular file");
  return p;
}

ExitStatus run_process(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw Error("cannot run a process with an empty argv");
  if (!(spec.timeout_s >= 0) || !std::isfinite(spec.timeout_s))
    throw Error("cannot run '" + spec.argv[0] + "': timeout " + std::to_string(spec.timeout_s) +
                " s is not a non-negative number of seconds");
  const std::string who = "cannot start '" + spec.argv[0] + "'";

  fs::path exe;
  UniqueFd in_fd, out_fd, err_fd;
  try {
    exe = resolve_executable(spec);
    in_fd = above_stdio(UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC)), "stdin");
    if (in_fd.get() < 0) throw Error("cannot open /dev/null for stdin: " + errno_text(errno));
    out_fd = open_output(spec.stdout_path, "stdout");
    if (!spec.stderr_path.empty() && spec.stderr_path == spec.stdout_path) {
      // One open file description for both streams keeps their interleaving; two O_TRUNC opens
      // would each write from offset 0 over the other.
      err_fd = UniqueFd(::fcntl(out_fd.get(), F_DUPFD_CLOEXEC, 3));
      if (err_fd.get() < 0)
        throw Error("cannot duplicate the stdout descriptor: " + errno_text(errno));
    } else {
      err_fd = open_output(spec.stderr_path, "stderr");
      if (!spec.stderr_path.empty() && !spec.stdout_path.empty() &&
          same_file(out_fd.get(), err_fd.get())) {
        err_fd = UniqueFd(::fcntl(out_fd.get(), F_DUPFD_CLOEXEC, 3));
        if (err_fd.get() < 0)
          throw Error("cannot duplicate the stdout descriptor: " + errno_text(errno));
      }
    }
    if (!spec.cwd.empty() && !fs::is_directory(spec.cwd))
      throw Error("working directory " + spec.cwd.string() + " does not exist");
  } catch (const std::exception& e) {
    throw Error(who + ": " + e.what());
  }

  rlimit lim{};
  unsigned max_fd = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    max_fd = static_cast<unsigned>(std::min<rlim_t>(lim.rlim_cur, 1u << 20));
  ChildSetup setup{in_fd.get(), out_fd.get(), err_fd.get(), max_fd};

  // The environment is assembled here and handed to execve directly: Boost 1.74's
  // basic_environment::find reads past the end of shorter entries (AddressSanitizer reports a
  // heap-buffer-overflow in environment.hpp), so it is not used.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env)
    if (k.empty() || k.find('=') != std::string::npos)
      throw Error(who + ": environment variable name '" + k + "' is empty or contains '='");
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (spec.env.count(std::string(entry.substr(0, eq)))) continue;
    env_strings.emplace_back(entry);
  }
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  auto set_env = [&envp](auto& exec) { exec.env = envp.data(); };
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());

  const auto start = Clock::now();
  std::error_code ec;
  pid_t pid = -1;
  {
    // With an error_code handler Boost reports instead of throwing, and calls on_error with the
    // pid of a child whose exec failed, which we reap so no zombie is left behind.
    auto reap_failed = [](auto& exec, const std::error_code&) {
      if (exec.pid > 0) {
        int st;
        while (::waitpid(exec.pid, &st, 0) < 0 && errno == EINTR) {
        }
      }
    };
    bp::child c =
        spec.cwd.empty()
            ? bp::child(bp::exe = exe.string(), bp::args = args, bp::error = ec,
                        bp::extend::on_setup = set_env, bp::extend::on_exec_setup = setup,
                        bp::extend::on_error = reap_failed)
            : bp::child(bp::exe = exe.string(), bp::args = args, bp::error = ec,
                        bp::extend::on_setup = set_env, bp::start_dir = spec.cwd.string(),
                        bp::extend::on_exec_setup = setup, bp::extend::on_error = reap_failed);
    if (ec || !c.valid())
      throw Error(who + " (" + exe.string() +
                  "): " + (ec ? ec.message() : std::string("Boost.Process returned no child")));
    pid = c.id();
    // From here on this file owns the pid: ~child must not kill or wait for it.
    c.detach();
  }
  in_fd.reset();
  out_fd.reset();
  err_fd.reset();

  std::optional<Clock::time_point> deadline;
  if (spec.timeout_s > 0)
    deadline = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(spec.timeout_s));

  bool exited = false;
  try {
    exited = wait_exited(pid, deadline);
  } catch (...) {
    kill_group(pid);
    reap(pid);
    throw;
  }
  // The moment the exit was seen (or the limit hit) is the process's wall time; killing the rest
  // of the group and reaping are our bookkeeping.
  const auto end = Clock::now();
  // Also after a normal exit: for workers and builds, anything still in the group is a leftover
  // (a daemonised helper, a background job of a shell recipe) that would keep our log files open
  // and keep running into the next measurement. The child is still a zombie here, so the group id
  // cannot have been reused.
  kill_group(pid);
  int status = reap(pid);

  ExitStatus st;
  st.wall_s = std::chrono::duration<double>(end - start).count();
  if (WIFEXITED(status)) {
    st.kind = ExitStatus::Kind::exited;
    st.code = WEXITSTATUS(status);
  } else if (!exited) {
    st.kind = ExitStatus::Kind::timed_out;
    st.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  } else if (WIFSIGNALED(status)) {
    st.kind = ExitStatus::Kind::signaled;
    st.signal = WTERMSIG(status);
  }
  return st;
}

}  // namespace abh
