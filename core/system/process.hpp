// Child processes (workers, build recipes) run in a process group of their own (set up in
// system/process_group.hpp) so that a hung arm is killed with everything it started,
// grandchildren included. Timeouts are enforced by this file, not by
// boost::process::child::wait_for, which in Boost 1.74 blocks for the whole timeout when the child
// has already exited.
//
// Nothing a child starts outlives the process that started it, even when that process is killed
// with SIGKILL and can run no code of its own: the child is killed by the kernel when its parent
// dies (PR_SET_PDEATHSIG), and a guardian process per child, which does nothing but wait, is told
// of the death the same way and kills the child's whole process group (a compiler's cc1plus, a
// recipe's background job, a helper a plugin forked). A process that leaves the group (setsid,
// setpgid) is out of its reach: only a cgroup could follow it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace abh {

struct SpawnSpec {
  std::vector<std::string> argv;           // argv[0] is resolved through PATH when it has no slash
  std::filesystem::path cwd;               // empty: inherit
  std::map<std::string, std::string> env;  // added to (or replacing in) the inherited environment
  std::filesystem::path stdout_path;       // truncated first; empty: /dev/null
  std::filesystem::path stderr_path;       // truncated first; empty: /dev/null
  // Descriptors to use instead of stdout_path / stderr_path (not closed here), e.g. files a
  // RunDirFs created without following links. -1: use the path.
  int stdout_fd = -1;
  int stderr_fd = -1;
  // When set, stdout and stderr both go to one pipe and each chunk of output is handed to this as
  // it arrives (the paths and descriptors above are then unused). Nothing is buffered here.
  std::function<void(std::string_view)> on_output;
  // A descriptor to use as the child's stdin (not closed here), e.g. its end of a socket the
  // starter talks to it through. -1: /dev/null.
  int stdin_fd = -1;
  double timeout_s = 0;  // 0: no limit (run_process; a ChildProcess is given its deadline)
};

struct ExitStatus {
  enum class Kind { exited, signaled, timed_out };
  Kind kind = Kind::exited;
  int code = 0;    // exit code when exited
  int signal = 0;  // terminating signal when signaled
  double wall_s = 0;

  bool ok() const { return kind == Kind::exited && code == 0; }
  std::string describe() const;  // "exit code 3", "killed by signal 11 (SIGSEGV)", "timed out ..."
};

// Runs to completion (or to the timeout, then SIGKILLs the whole group). Throws only when the
// process cannot be started at all; the message names argv[0] and the reason.
ExitStatus run_process(const SpawnSpec& spec);

// A child that runs while the thread that started it does other things (run_process is one
// waited for at once): the sweep starts the next arm's worker while the current one measures.
// It has its process group and guardian like any child; one dropped without wait() is killed
// with its group and reaped.
class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;
  // Starts the child (spec.timeout_s is not used: wait() takes a deadline). Throws as
  // run_process does when it cannot be started.
  explicit ChildProcess(const SpawnSpec& spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const;
  // Waits for the exit until the deadline, then kills what is left of the group (all of it when
  // the deadline passed) and reaps the child. Its wall_s counts from `since` (its start by
  // default). Call once.
  ExitStatus wait(std::optional<Clock::time_point> deadline,
                  std::optional<Clock::time_point> since = std::nullopt);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Resolves a program name through PATH; throws a message naming the program when not found.
std::filesystem::path find_program(const std::string& name);

}  // namespace abh
