// FileLock (system/file_lock.hpp): the run lock tries it once, a worker's turn to open its GPU
// waits for it. Two locks of one process on one file exclude each other like two processes do
// (each has its own open file description).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "model/launch.hpp"
#include "system/error.hpp"
#include "system/file_lock.hpp"
#include "system/run_dir_fs.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

TEST_CASE("file_lock: a lock held elsewhere is not taken without waiting, and is once released") {
  test::TempDir tmp;
  const RunDirFs run(tmp.path());
  std::optional<FileLock> first(std::in_place, run, ".lock", FileLock::Wait::no);
  REQUIRE(first->held());
  CHECK_FALSE(FileLock(run, ".lock", FileLock::Wait::no).held());
  first.reset();
  CHECK(FileLock(run, ".lock", FileLock::Wait::no).held());
}

TEST_CASE("file_lock: waiting for a lock returns only after its holder let go") {
  test::TempDir tmp;
  const RunDirFs run(tmp.path());
  std::optional<FileLock> holder(std::in_place, run, ".device-open.lock", FileLock::Wait::yes);
  std::atomic<bool> taken{false};
  std::thread waiter([&] {
    const FileLock turn(run, ".device-open.lock", FileLock::Wait::yes);
    taken = turn.held();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(taken.load());  // the holder still holds it: no wait may end before it lets go
  holder.reset();
  waiter.join();
  CHECK(taken.load());
}

TEST_CASE("file_lock: a lock file that is a link is refused, by name") {
  test::TempDir tmp;
  test::write(tmp.path() / "elsewhere", "");
  fs::create_symlink(tmp.path() / "elsewhere", tmp.path() / ".lock");
  const RunDirFs run(tmp.path());
  CHECK(test::error_of([&] { FileLock(run, ".lock", FileLock::Wait::yes); }).find(".lock") !=
        std::string::npos);
}

TEST_CASE("file_lock: local lanes take turns to open their GPUs, one lane or Slurm lanes do not") {
  LauncherSpec local;
  LauncherSpec slurm;
  slurm.name = "slurm";
  CHECK_FALSE(lanes_take_turns_to_open(local, 1));
  CHECK(lanes_take_turns_to_open(local, 2));
  CHECK(lanes_take_turns_to_open(local, 4));
  CHECK_FALSE(lanes_take_turns_to_open(slurm, 4));
}
