// The run lock: one orchestrator per run directory, released when its holder goes away, even by
// SIGKILL (tests/integration/kill_resume.sh kills a real orchestrator).
#ifdef ABH_HAVE_ORCHESTRATOR

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include "run_lock.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

using test::usage_error_of;

namespace {

const char* kBusy = "another abharness is writing ";

}  // namespace

TEST_CASE("run_lock: a second holder is refused until the first lets go") {
  test::TempDir tmp;
  std::optional<RunLock> first;
  first.emplace(tmp.path());
  // flock locks belong to an open file description: a second open in this same process conflicts
  // just as another process would.
  CHECK(usage_error_of([&] { RunLock second(tmp.path()); }) ==
        std::string(kBusy) + tmp.path().string() +
            ": wait for it to finish (or stop it) before running or resuming this run");
  first.reset();
  CHECK_NOTHROW(RunLock again(tmp.path()));
}

TEST_CASE("run_lock: the lock file names its holder's pid") {
  test::TempDir tmp;
  RunLock lock(tmp.path());
  CHECK(test::slurp(tmp.path() / ".lock") == std::to_string(::getpid()) + "\n");
}

TEST_CASE("run_lock: a holder killed by SIGKILL leaves no stale lock") {
  test::TempDir tmp;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child only takes the lock and waits to be killed; a failure closes the pipe unwritten.
    try {
      RunLock lock(tmp.path());
      char c = 1;
      if (::write(ready[1], &c, 1) != 1) ::_exit(1);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  CHECK(usage_error_of([&] { RunLock busy(tmp.path()); }).rfind(kBusy, 0) == 0);
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK_NOTHROW(RunLock after(tmp.path()));
}

TEST_CASE("run_lock: a run directory that does not exist is an error naming it") {
  test::TempDir tmp;
  const fs::path missing = tmp.path() / "no-such-run";
  CHECK(test::error_of([&] {
          RunLock lock(missing);
        }).rfind("cannot open the run directory " + missing.string() + ": ", 0) == 0);
}

TEST_CASE("run_lock: a lock file that is a link is refused, and its target left alone") {
  test::TempDir tmp;
  const fs::path outside = tmp.path() / "outside.txt";
  test::write(outside, "precious\n");
  fs::create_directory(tmp.path() / "run");
  SUBCASE("a symbolic link") {
    fs::create_symlink(outside, tmp.path() / "run" / ".lock");
    CHECK(test::error_of([&] { RunLock lock(tmp.path() / "run"); }).find("is a symbolic link") !=
          std::string::npos);
  }
  SUBCASE("a hard link") {
    fs::create_hard_link(outside, tmp.path() / "run" / ".lock");
    CHECK(test::error_of([&] { RunLock lock(tmp.path() / "run"); }).find("2 hard links") !=
          std::string::npos);
  }
  CHECK(test::slurp(outside) == "precious\n");
}

#endif  // ABH_HAVE_ORCHESTRATOR
