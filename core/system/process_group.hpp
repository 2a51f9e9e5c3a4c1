// The process group a child runs in: what the forked child does before execve (its own group,
// death with its parent, clean standard streams and descriptors), and the guardian that kills the
// whole group when the thread that started the child dies, however it dies. Used by run_process
// (system/process.cpp) only; the child-side code is async-signal-safe because the parent may have
// other threads.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace abh::process_detail {

// Kills a child's process group when the thread that started the child dies, however it dies.
// The orchestrator cannot do that itself when it is SIGKILLed; the kernel tells this process
// instead (PR_SET_PDEATHSIG), and it kills the group. It is a fork that never execs: it holds no
// descriptor (a lock or a pipe it kept open would outlive the orchestrator), blocks every signal
// but the one it waits for, and is killed and reaped when the child is done, before the child is
// reaped, so the group id it acts on can never belong to another group.
class GroupGuardian {
 public:
  GroupGuardian(pid_t group, unsigned max_fd);
  GroupGuardian(const GroupGuardian&) = delete;
  GroupGuardian& operator=(const GroupGuardian&) = delete;
  ~GroupGuardian();

 private:
  [[noreturn]] static void guard(pid_t group, pid_t parent, unsigned max_fd);
  pid_t pid_ = -1;
};

// Everything the forked child does before execve. Only async-signal-safe calls: the parent may
// have other threads, whose locks the child inherits in whatever state fork found them.
struct ChildSetup {
  int in_fd, out_fd, err_fd;
  unsigned max_fd;  // for the fallback when close_range is unavailable (kernels before 5.11)
  pid_t parent;     // the orchestrator

  template <typename Exec>
  [[noreturn]] static void fail(Exec& exec, const char* what) {
    exec.set_error(std::error_code(errno, std::system_category()), what);
    ::_exit(127);
  }

  template <typename Exec>
  void operator()(Exec& exec) const {
    // Our own process group, so a timeout can kill everything the child starts.
    if (::setpgid(0, 0) != 0) fail(exec, "setpgid(0, 0) in the child");
    // Killed with the orchestrator (its guardian starts only after this child exists); an
    // orchestrator that died before this line leaves it orphaned already, so it goes at once.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(exec, "prctl(PR_SET_PDEATHSIG) in the child");
    if (::getppid() != parent) ::_exit(127);
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

}  // namespace abh::process_detail
