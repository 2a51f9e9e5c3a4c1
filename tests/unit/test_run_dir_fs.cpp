// RunDirFs::move (system/run_dir_fs.hpp): what a Slurm lane uses to set a half-measured shape's
// results aside. A result moves by rename within the run directory, and nothing that is not a
// regular file there (a planted link) is ever moved.
#include <doctest/doctest.h>

#include <filesystem>

#include "system/error.hpp"
#include "system/run_dir_fs.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

TEST_CASE("run_dir_fs: move renames a result into a new directory, content unchanged") {
  test::TempDir tmp;
  const RunDirFs run(tmp.path());
  run.write_atomic("results/m32/A1.json", "{\"a\":1}");
  run.move("results/m32/A1.json", "set_aside/job7-r0/m32/A1.json");
  CHECK(run.kind("results/m32/A1.json") == RunDirFs::Kind::absent);
  CHECK(run.read("set_aside/job7-r0/m32/A1.json", 1024) == "{\"a\":1}");
}

TEST_CASE("run_dir_fs: move refuses a link or a missing file, by name") {
  test::TempDir tmp;
  const RunDirFs run(tmp.path());
  test::write(tmp.path() / "outside.json", "{}");
  run.make_dirs("results/m32");
  fs::create_symlink(tmp.path() / "outside.json", tmp.path() / "results/m32/B.json");
  CHECK(test::error_of([&] {
          run.move("results/m32/B.json", "set_aside/j/m32/B.json");
        }).find("results/m32/B.json is a symbolic link") != std::string::npos);
  CHECK(fs::is_symlink(tmp.path() / "results/m32/B.json"));
  CHECK(run.kind("set_aside/j/m32/B.json") == RunDirFs::Kind::absent);
  CHECK(test::error_of([&] {
          run.move("results/m64/A1.json", "set_aside/j/m64/A1.json");
        }).find("results/m64/A1.json") != std::string::npos);
}
