#include "system/process_group.hpp"

#include <sys/wait.h>

#include <cstring>
#include <string>

#include "system/eintr.hpp"
#include "system/error.hpp"

namespace abh::process_detail {
namespace {

// Closes every descriptor from `first` on; async-signal-safe (close_range, or close one by one on
// kernels before 5.9).
void close_from(unsigned first, unsigned max_fd) {
  if (::close_range(first, ~0u, 0) != 0)
    for (unsigned fd = first; fd < max_fd; ++fd) ::close(static_cast<int>(fd));
}

}  // namespace

GroupGuardian::GroupGuardian(pid_t group, unsigned max_fd) {
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0)
    throw Error("cannot fork a guardian for process group " + std::to_string(group) + ": " +
                std::strerror(errno));
  if (pid_ == 0) guard(group, parent, max_fd);
}

GroupGuardian::~GroupGuardian() {
  ::kill(pid_, SIGKILL);
  int st;
  retry_on_eintr([&] { return ::waitpid(pid_, &st, 0); });
}

void GroupGuardian::guard(pid_t group, pid_t parent, unsigned max_fd) {
  // Only async-signal-safe calls: the parent may have other threads.
  close_from(0, max_fd);
  sigset_t all;
  ::sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() == parent) {  // else the parent died before the line above
    sigset_t term;
    ::sigemptyset(&term);
    ::sigaddset(&term, SIGTERM);
    while (::sigwaitinfo(&term, nullptr) != SIGTERM) {
    }
  }
  ::kill(-group, SIGKILL);
  ::_exit(0);
}

}  // namespace abh::process_detail
