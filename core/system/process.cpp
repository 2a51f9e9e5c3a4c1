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

#include "system/eintr.hpp"
#include "system/error.hpp"
#include "system/process_group.hpp"
#include "system/unique_fd.hpp"

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

// Reads what is in the pipe now and hands it to `sink`; false at end of file.
bool read_output(int fd, const std::function<void(std::string_view)>& sink) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = retry_on_eintr([&] { return ::read(fd, buf, sizeof buf); });
    if (n > 0) {
      sink(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) return false;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    throw Error("cannot read a child's output: " + errno_text(errno));
  }
}

timespec to_timespec(Clock::duration d) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  if (ns < 0) ns = 0;
  return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}

// Blocks until the child is a zombie (exited, not yet reaped) or the deadline passes (false),
// handing the child's output to `sink` as it arrives when `output` is a pipe (closed at its end
// of file). The zombie is left in place on purpose: while it exists its pid, and so its
// process group id, cannot be reused, so the kill(-pgid) that follows can only reach our own
// group. Without a pidfd (`pidfd` < 0) the exit is polled for every millisecond.
bool wait_exited(pid_t pid, int pidfd, std::optional<Clock::time_point> deadline, UniqueFd& output,
                 const std::function<void(std::string_view)>& sink) {
  for (;;) {
    pollfd fds[2];
    nfds_t n = 0;
    if (pidfd >= 0) fds[n++] = pollfd{pidfd, POLLIN, 0};
    const nfds_t out_slot = n;
    if (output.valid()) fds[n++] = pollfd{output.get(), POLLIN, 0};
    std::optional<Clock::duration> wait;
    if (pidfd < 0) wait = std::chrono::milliseconds(1);
    if (deadline) {
      auto left = *deadline - Clock::now();
      if (left <= Clock::duration::zero()) return false;
      if (!wait || left < *wait) wait = left;
    }
    timespec ts = wait ? to_timespec(*wait) : timespec{};
    const int r = nothing_if_interrupted(::ppoll(fds, n, wait ? &ts : nullptr, nullptr));
    if (r < 0) throw Error("ppoll on a child: " + errno_text(errno));
    if (r > 0 && output.valid() && fds[out_slot].revents != 0 && !read_output(output.get(), sink))
      output.reset();
    if (pidfd >= 0) {
      if (r > 0 && (fds[0].revents & POLLIN)) return true;
      continue;
    }
    siginfo_t info{};
    const int w = nothing_if_interrupted(
        ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT));
    if (w < 0) throw Error("waitid: " + errno_text(errno));
    if (w == 0 && info.si_pid == pid) return true;
  }
}

// After the child's group is gone: the rest of its output. A process that left the group could
// hold the pipe open for ever, so this stops at end of file or after 2 s without any.
void drain_output(int output, const std::function<void(std::string_view)>& sink) {
  for (;;) {
    pollfd pfd{output, POLLIN, 0};
    const timespec ts{2, 0};
    const int r = retry_on_eintr([&] { return ::ppoll(&pfd, 1, &ts, nullptr); });
    if (r <= 0 || !read_output(output, sink)) return;
  }
}

int reap(pid_t pid) {
  int status = 0;
  if (retry_on_eintr([&] { return ::waitpid(pid, &status, 0); }) < 0)
    throw Error("waitpid(" + std::to_string(pid) + "): " + errno_text(errno));
  return status;
}

void kill_group(pid_t pid) {
  // ESRCH (group already empty) and EPERM (a member changed credentials) cannot be acted on
  // here; the direct child is also signalled by pid in case it left the group itself.
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

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

namespace {

// The child's standard streams, opened before the fork; `output` is the read end of the pipe
// when the spec asks for its output as it comes.
struct Streams {
  UniqueFd in, out, err, output;
};

UniqueFd dup_above_stdio(int fd, const std::string& what) {
  UniqueFd d(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
  if (!d.valid())
    throw Error("cannot duplicate the descriptor for " + what + ": " + errno_text(errno));
  return d;
}

Streams open_streams(const SpawnSpec& spec) {
  Streams s;
  if (spec.stdin_fd >= 0) {
    s.in = dup_above_stdio(spec.stdin_fd, "stdin");
  } else {
    s.in = above_stdio(UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC)), "stdin");
    if (!s.in.valid()) throw Error("cannot open /dev/null for stdin: " + errno_text(errno));
  }
  if (spec.on_output) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw Error("cannot create a pipe: " + errno_text(errno));
    s.output = UniqueFd(p[0]);
    s.out = above_stdio(UniqueFd(p[1]), "the output pipe");
    if (::fcntl(s.output.get(), F_SETFL, O_NONBLOCK) != 0)
      throw Error("cannot make the output pipe non-blocking: " + errno_text(errno));
    s.err = dup_above_stdio(s.out.get(), "stderr");
    return s;
  }
  s.out = spec.stdout_fd >= 0 ? dup_above_stdio(spec.stdout_fd, "stdout")
                              : open_output(spec.stdout_path, "stdout");
  if (spec.stderr_fd >= 0) {
    s.err = dup_above_stdio(spec.stderr_fd, "stderr");
  } else if (spec.stdout_fd < 0 && !spec.stderr_path.empty() &&
             spec.stderr_path == spec.stdout_path) {
    // One open file description for both streams keeps their interleaving; two O_TRUNC opens
    // would each write from offset 0 over the other.
    s.err = dup_above_stdio(s.out.get(), "stderr");
  } else {
    s.err = open_output(spec.stderr_path, "stderr");
    if (!spec.stderr_path.empty() && (spec.stdout_fd >= 0 || !spec.stdout_path.empty()) &&
        same_file(s.out.get(), s.err.get()))
      s.err = dup_above_stdio(s.out.get(), "stderr");
  }
  return s;
}

// The child's environment: the inherited one with the spec's variables added or replaced. It is
// handed to execve directly: Boost 1.74's basic_environment::find reads past the end of shorter
// entries (AddressSanitizer reports a heap-buffer-overflow in environment.hpp).
std::vector<std::string> child_environment(const SpawnSpec& spec, const std::string& who) {
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
  return env_strings;
}

unsigned descriptor_limit() {
  rlimit lim{};
  unsigned max_fd = 65536;
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    max_fd = static_cast<unsigned>(std::min<rlim_t>(lim.rlim_cur, 1u << 20));
  return max_fd;
}

// Forks and execs the child; returns its pid. Throws naming the program when it cannot start.
pid_t spawn(const SpawnSpec& spec, const fs::path& exe, const Streams& streams,
            std::vector<std::string>& env_strings, const std::string& who) {
  process_detail::ChildSetup setup{streams.in.get(), streams.out.get(), streams.err.get(),
                                   descriptor_limit(), ::getpid()};
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  auto set_env = [&envp](auto& exec) { exec.env = envp.data(); };
  std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
  std::error_code ec;
  // With an error_code handler Boost reports instead of throwing, and calls on_error with the
  // pid of a child whose exec failed, which we reap so no zombie is left behind.
  auto reap_failed = [](auto& exec, const std::error_code&) {
    if (exec.pid > 0) {
      int st;
      retry_on_eintr([&] { return ::waitpid(exec.pid, &st, 0); });
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
  const pid_t pid = c.id();
  // From here on this file owns the pid: ~child must not kill or wait for it.
  c.detach();
  return pid;
}

ExitStatus status_of(int status, bool exited, double wall_s) {
  ExitStatus st;
  st.wall_s = wall_s;
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

}  // namespace

struct ChildProcess::Impl {
  pid_t pid = -1;
  UniqueFd pidfd;   // invalid where pidfd_open is unavailable: the exit is polled for
  UniqueFd output;  // the output pipe's read end, when the spec asked for it, until its end of file
  std::function<void(std::string_view)> on_output;
  Clock::time_point start;
  std::optional<process_detail::GroupGuardian> guardian;
  bool reaped = false;
};

ChildProcess::ChildProcess(const SpawnSpec& spec) : impl_(std::make_unique<Impl>()) {
  if (spec.argv.empty()) throw Error("cannot run a process with an empty argv");
  const std::string who = "cannot start '" + spec.argv[0] + "'";
  fs::path exe;
  Streams streams;
  try {
    exe = resolve_executable(spec);
    streams = open_streams(spec);
    if (!spec.cwd.empty() && !fs::is_directory(spec.cwd))
      throw Error("working directory " + spec.cwd.string() + " does not exist");
  } catch (const std::exception& e) {
    throw Error(who + ": " + e.what());
  }
  std::vector<std::string> env_strings = child_environment(spec, who);
  Impl& c = *impl_;
  c.on_output = spec.on_output;
  c.start = Clock::now();
  c.pid = spawn(spec, exe, streams, env_strings, who);
  c.output = std::move(streams.output);
  try {
    c.guardian.emplace(c.pid, descriptor_limit());
    if (!process_detail::force_polling_wait.load()) c.pidfd = UniqueFd(pidfd_open(c.pid));
  } catch (...) {
    kill_group(c.pid);
    reap(c.pid);
    throw;
  }
}

ChildProcess::~ChildProcess() {
  if (impl_->reaped) return;
  kill_group(impl_->pid);
  impl_->guardian.reset();
  try {
    reap(impl_->pid);
  } catch (...) {  // a destructor cannot report it; the child was killed
  }
}

pid_t ChildProcess::pid() const {
  return impl_->pid;
}

ExitStatus ChildProcess::wait(std::optional<Clock::time_point> deadline,
                              std::optional<Clock::time_point> since) {
  Impl& c = *impl_;
  if (c.reaped) throw Error("ChildProcess::wait called twice for pid " + std::to_string(c.pid));
  bool exited = false;
  Clock::time_point end;
  try {
    exited = wait_exited(c.pid, c.pidfd.get(), deadline, c.output, c.on_output);
    // The moment the exit was seen (or the limit hit) is the process's wall time; killing the
    // rest of the group and reaping are our bookkeeping.
    end = Clock::now();
    // Also after a normal exit: for workers and builds, anything still in the group is a
    // leftover (a daemonised helper, a background job of a shell recipe) that would keep our log
    // files open and keep running into the next measurement. The child is still a zombie here,
    // so the group id cannot have been reused.
    kill_group(c.pid);
    if (c.output.valid()) drain_output(c.output.get(), c.on_output);
  } catch (...) {
    kill_group(c.pid);
    c.guardian.reset();
    reap(c.pid);
    c.reaped = true;
    throw;
  }
  // The guardian goes before the child is reaped: its group id is then still ours (see above).
  c.guardian.reset();
  const int status = reap(c.pid);
  c.reaped = true;
  return status_of(status, exited,
                   std::chrono::duration<double>(end - since.value_or(c.start)).count());
}

ExitStatus run_process(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw Error("cannot run a process with an empty argv");
  if (!(spec.timeout_s >= 0) || !std::isfinite(spec.timeout_s))
    throw Error("cannot run '" + spec.argv[0] + "': timeout " + std::to_string(spec.timeout_s) +
                " s is not a non-negative number of seconds");
  ChildProcess child(spec);
  std::optional<Clock::time_point> deadline;
  if (spec.timeout_s > 0)
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(spec.timeout_s));
  return child.wait(deadline);
}

}  // namespace abh
