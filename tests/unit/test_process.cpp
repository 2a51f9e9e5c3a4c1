#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "system/error.hpp"
#include "system/process.hpp"
#include "test_support.hpp"

namespace abh::process_detail {
extern std::atomic<bool> force_polling_wait;
}

namespace {
namespace fs = std::filesystem;
using abh::ExitStatus;
using abh::run_process;
using abh::SpawnSpec;
using abh::test::error_of;
using abh::test::slurp;
using abh::test::write;

// Each test case gets a directory of its own under /tmp.
struct ProcessTempDir : abh::test::TempDir {
  ProcessTempDir() : abh::test::TempDir("abh-proc") {}
};

// Runs the body with the pidfd wait and again with the polling fallback.
struct WaitMode {
  bool polling;
  explicit WaitMode(bool p) : polling(p) { abh::process_detail::force_polling_wait = p; }
  ~WaitMode() { abh::process_detail::force_polling_wait = false; }
};

SpawnSpec sh_spec(const std::string& script, double timeout = 0) {
  SpawnSpec s;
  s.argv = {"sh", "-c", script};
  s.timeout_s = timeout;
  return s;
}

// Dead means gone, or a zombie waiting for init: a zombie still answers kill(pid, 0).
bool process_dead(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

bool dies_within(pid_t pid, double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (process_dead(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return process_dead(pid);
}

pid_t read_pid(const fs::path& p) {
  std::string s = slurp(p);
  REQUIRE_FALSE(s.empty());
  return static_cast<pid_t>(std::stol(s));
}

}  // namespace

TEST_CASE("process: exit codes are reported") {
  ExitStatus ok = run_process(sh_spec("exit 0"));
  CHECK(ok.ok());
  CHECK(ok.describe() == "exit code 0");
  ExitStatus three = run_process(sh_spec("exit 3"));
  CHECK_FALSE(three.ok());
  CHECK(three.kind == ExitStatus::Kind::exited);
  CHECK(three.code == 3);
  CHECK(three.describe() == "exit code 3");
}

TEST_CASE("process: death by signal is reported with the signal's name") {
  ExitStatus segv = run_process(sh_spec("kill -SEGV $$"));
  CHECK(segv.kind == ExitStatus::Kind::signaled);
  CHECK(segv.signal == SIGSEGV);
  CHECK(segv.describe() == "killed by signal 11 (SIGSEGV)");
  ExitStatus killed = run_process(sh_spec("kill -KILL $$"));
  CHECK(killed.kind == ExitStatus::Kind::signaled);
  CHECK(killed.signal == SIGKILL);
  CHECK(killed.describe() == "killed by signal 9 (SIGKILL)");
  CHECK_FALSE(killed.ok());
}

TEST_CASE("process: a quick child with a long timeout returns promptly") {
  // The Boost 1.74 wait_for defect: it blocks for the whole timeout once the child has exited.
  for (bool polling : {false, true}) {
    CAPTURE(polling);
    WaitMode mode(polling);
    auto t0 = std::chrono::steady_clock::now();
    ExitStatus st = run_process(sh_spec("exit 0", 30));
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Bounds far from the 30 s timeout it must not wait for, and far above a loaded machine's
    // start-up (two busy loops on two cores stretched it past 1 s).
    CHECK(st.ok());
    CHECK(wall < 10);
    CHECK(st.wall_s < 10);
    // A child that runs a little while is waited for, not reported early.
    ExitStatus slow = run_process(sh_spec("sleep 0.2; exit 5", 30));
    CHECK(slow.code == 5);
    CHECK(slow.wall_s >= 0.2);
    CHECK(slow.wall_s < 10);
  }
}

TEST_CASE("process: a hang is killed at its timeout") {
  for (bool polling : {false, true}) {
    CAPTURE(polling);
    WaitMode mode(polling);
    SpawnSpec s;
    s.argv = {"sleep", "100"};
    s.timeout_s = 0.5;
    ExitStatus st = run_process(s);
    CHECK(st.kind == ExitStatus::Kind::timed_out);
    CHECK_FALSE(st.ok());
    CHECK(st.wall_s >= 0.5);
    CHECK(st.wall_s < 20);  // killed, not the 100 s of its sleep (1.25 s failed under load)
    CHECK(st.describe() == "timed out after 0.5 s (process group killed)");
  }
}

TEST_CASE("process: a timeout kills grandchildren too") {
  for (bool polling : {false, true}) {
    CAPTURE(polling);
    WaitMode mode(polling);
    ProcessTempDir tmp;
    const fs::path pidfile = tmp.path() / "grandchild.pid";
    ExitStatus st =
        run_process(sh_spec("sleep 100 & echo $! > '" + pidfile.string() + "'; sleep 100", 0.5));
    CHECK(st.kind == ExitStatus::Kind::timed_out);
    CHECK(st.wall_s < 20);
    pid_t grandchild = read_pid(pidfile);
    CHECK(dies_within(grandchild, 2.0));
  }
}

TEST_CASE("process: leftovers in the group are killed after a normal exit") {
  ProcessTempDir tmp;
  const fs::path pidfile = tmp.path() / "daemon.pid";
  ExitStatus st =
      run_process(sh_spec("sleep 100 & echo $! > '" + pidfile.string() + "'; exit 0", 10));
  CHECK(st.ok());
  CHECK(st.wall_s < 5);  // not the 10 s timeout: the exit is seen while the daemon lives on
  CHECK(dies_within(read_pid(pidfile), 2.0));
}

TEST_CASE("process: stdout and stderr go to truncated files") {
  ProcessTempDir tmp;
  const fs::path out = tmp.path() / "out.txt", err = tmp.path() / "err.txt";
  {
    std::ofstream(out) << std::string(1000, 'x') << "\n";
    std::ofstream(err) << std::string(1000, 'y') << "\n";
  }
  SpawnSpec s = sh_spec("echo to-stdout; echo to-stderr >&2");
  s.stdout_path = out;
  s.stderr_path = err;
  REQUIRE(run_process(s).ok());
  CHECK(slurp(out) == "to-stdout\n");
  CHECK(slurp(err) == "to-stderr\n");

  // One file for both keeps both streams, in order, and is truncated too.
  SpawnSpec both = sh_spec("echo one; echo two >&2; echo three");
  both.stdout_path = out;
  both.stderr_path = out;
  REQUIRE(run_process(both).ok());
  CHECK(slurp(out) == "one\ntwo\nthree\n");

  // An empty path is /dev/null: nothing is written anywhere we can see, and the child runs.
  SpawnSpec quiet = sh_spec("echo nowhere; echo nowhere >&2");
  CHECK(run_process(quiet).ok());
}

TEST_CASE("process: environment is inherited and overlaid") {
  ProcessTempDir tmp;
  REQUIRE(::setenv("ABH_TEST_INHERITED", "from-parent", 1) == 0);
  REQUIRE(::setenv("ABH_TEST_REPLACED", "old", 1) == 0);
  SpawnSpec s = sh_spec("echo \"$ABH_TEST_INHERITED $ABH_TEST_REPLACED $ABH_TEST_NEW\"");
  s.env = {{"ABH_TEST_REPLACED", "new"}, {"ABH_TEST_NEW", "added value"}};
  s.stdout_path = tmp.path() / "env.txt";
  REQUIRE(run_process(s).ok());
  CHECK(slurp(s.stdout_path) == "from-parent new added value\n");
  ::unsetenv("ABH_TEST_INHERITED");
  ::unsetenv("ABH_TEST_REPLACED");
}

TEST_CASE("process: working directory, stdin and descriptor hygiene") {
  ProcessTempDir tmp;
  SpawnSpec pwd;
  pwd.argv = {"pwd"};
  pwd.cwd = tmp.path();
  pwd.stdout_path = tmp.path() / "pwd.txt";
  REQUIRE(run_process(pwd).ok());
  CHECK(fs::path(slurp(pwd.stdout_path).substr(0, slurp(pwd.stdout_path).size() - 1)) ==
        fs::canonical(tmp.path()));

  // stdin is /dev/null: a child that reads it sees end of file instead of hanging on a terminal.
  SpawnSpec cat;
  cat.argv = {"cat"};
  cat.timeout_s = 5;
  ExitStatus st = run_process(cat);
  CHECK(st.ok());
  CHECK(st.wall_s < 4);  // not the 5 s timeout

  // A descriptor this process opened without O_CLOEXEC does not leak into the child.
  int fd = ::open("/dev/null", O_RDONLY);
  REQUIRE(fd > 2);
  ExitStatus leak =
      run_process(sh_spec("[ -e /proc/self/fd/" + std::to_string(fd) + " ] && exit 1 || exit 0"));
  ::close(fd);
  CHECK(leak.describe() == "exit code 0");

  // A relative program path with a slash is relative to the child's working directory.
  {
    std::ofstream script(tmp.path() / "hello.sh");
    script << "#!/bin/sh\nexit 7\n";
  }
  fs::permissions(tmp.path() / "hello.sh", fs::perms::owner_all);
  SpawnSpec rel;
  rel.argv = {"./hello.sh"};
  rel.cwd = tmp.path();
  CHECK(run_process(rel).code == 7);
}

TEST_CASE("process: a program that cannot be started is an error naming it") {
  std::string msg = error_of([] {
    SpawnSpec s;
    s.argv = {"abh-no-such-program-xyz", "--flag"};
    run_process(s);
  });
  CHECK(msg.find("abh-no-such-program-xyz") != std::string::npos);
  CHECK(msg.find("not found in PATH") != std::string::npos);
  CHECK(error_of([] {
          abh::find_program("abh-no-such-program-xyz");
        }).find("'abh-no-such-program-xyz'") != std::string::npos);
  CHECK(abh::find_program("sh").filename() == "sh");

  // execve itself fails (bad interpreter): an error, and the forked child is reaped.
  ProcessTempDir tmp;
  {
    std::ofstream script(tmp.path() / "bad.sh");
    script << "#!/nonexistent/interpreter\n";
  }
  fs::permissions(tmp.path() / "bad.sh", fs::perms::owner_all);
  std::string exec_msg = error_of([&] {
    SpawnSpec s;
    s.argv = {(tmp.path() / "bad.sh").string()};
    run_process(s);
  });
  CHECK(exec_msg.find("bad.sh") != std::string::npos);
  CHECK(exec_msg.find("cannot start") != std::string::npos);
  int status = 0;
  CHECK(::waitpid(-1, &status, WNOHANG) <= 0);  // no zombie left behind

  std::string dir_msg = error_of([&] {
    SpawnSpec s;
    s.argv = {"true"};
    s.stdout_path = tmp.path() / "missing-dir" / "out.txt";
    run_process(s);
  });
  CHECK(dir_msg.find("missing-dir/out.txt") != std::string::npos);
}

TEST_CASE(
    "process: a ChildProcess runs while its starter goes on, and its limit starts when asked") {
  for (bool polling : {false, true}) {
    CAPTURE(polling);
    WaitMode mode(polling);
    ProcessTempDir d;
    // Started now, told to go later: the child waits for a line on its stdin (a socket here, as a
    // worker started ahead gets), then writes it out.
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    SpawnSpec s = sh_spec("read line; echo \"got $line\" > " + (d.path() / "got").string());
    s.stdin_fd = sv[0];
    abh::ChildProcess child(s);
    ::close(sv[0]);
    // 1.5 s: room enough that a loaded machine's slow echo still reads well below it.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    CHECK_FALSE(fs::exists(d.path() / "got"));  // still waiting
    const auto go = std::chrono::steady_clock::now();
    REQUIRE(::write(sv[1], "go\n", 3) == 3);
    ::close(sv[1]);
    // The wall time counts from the go, not from the start 1.5 s earlier.
    ExitStatus st = child.wait(go + std::chrono::seconds(20), go);
    CHECK(st.ok());
    CHECK(st.wall_s < 1.45);
    CHECK(slurp(d.path() / "got") == "got go\n");
  }
}

TEST_CASE("process: a ChildProcess past its deadline is killed with its group") {
  ProcessTempDir d;
  abh::ChildProcess child(
      sh_spec("sleep 30 & echo $! > " + (d.path() / "bg").string() + "; sleep 30"));
  const auto t0 = std::chrono::steady_clock::now();
  ExitStatus st = child.wait(t0 + std::chrono::milliseconds(300));
  CHECK(st.kind == ExitStatus::Kind::timed_out);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(dies_within(read_pid(d.path() / "bg"), 2));
  CHECK_THROWS_WITH(child.wait(std::nullopt), doctest::Contains("called twice"));
}

TEST_CASE("process: a ChildProcess dropped without a wait is killed and reaped") {
  ProcessTempDir d;
  pid_t pid = -1;
  {
    abh::ChildProcess child(
        sh_spec("echo $$ > " + (d.path() / "pid").string() + "; exec sleep 30"));
    for (int i = 0; i < 200 && slurp(d.path() / "pid").empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pid = child.pid();
  }
  CHECK(dies_within(pid, 2));
  // Reaped: no zombie of ours is left under that pid.
  CHECK(::waitpid(pid, nullptr, WNOHANG) == -1);
}
