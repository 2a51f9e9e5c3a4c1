// Where the data files are found: $ABH_DATA_DIR when set (a typo is an error, not a fallback),
// else the install location beside the executable, else the compiled-in source tree; a failed
// search lists every place it looked.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "system/data_dir.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

// Sets (or unsets, with nullopt) ABH_DATA_DIR for one test and restores it afterwards.
class DataDirEnv {
 public:
  explicit DataDirEnv(const std::optional<std::string>& value) {
    if (const char* old = std::getenv("ABH_DATA_DIR")) old_ = old;
    if (value)
      ::setenv("ABH_DATA_DIR", value->c_str(), 1);
    else
      ::unsetenv("ABH_DATA_DIR");
  }
  ~DataDirEnv() {
    if (old_)
      ::setenv("ABH_DATA_DIR", old_->c_str(), 1);
    else
      ::unsetenv("ABH_DATA_DIR");
  }

 private:
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("data_dir: ABH_DATA_DIR wins and must be a directory") {
  test::TempDir tmp;
  {
    DataDirEnv env(tmp.path().string());
    CHECK(resolve_data_dir("/nonexistent/fallback") == tmp.path());
  }
  {
    const std::string typo = (tmp.path() / "dta").string();
    DataDirEnv env(typo);
    CHECK_THROWS_WITH_AS(
        resolve_data_dir(tmp.path().string()),
        doctest::Contains(("ABH_DATA_DIR=" + typo + " is not a directory").c_str()), UsageError);
  }
}

TEST_CASE("data_dir: without ABH_DATA_DIR the compiled-in directory is used, or every try listed") {
  test::TempDir tmp;
  DataDirEnv env(std::nullopt);
  // The unit test binary has no share/abharness/data beside it.
  const fs::path installed =
      fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "share/abharness/data";
  REQUIRE_FALSE(fs::exists(installed));
  CHECK(resolve_data_dir(tmp.path().string()) == tmp.path());
  const std::string missing = (tmp.path() / "gone").string();
  const std::string msg = test::error_of([&] { resolve_data_dir(missing); });
  CHECK(msg.rfind("cannot find abharness's data directory (gpus.json, models/); looked in: " +
                      installed.string() + " " + missing,
                  0) == 0);
  CHECK(msg.find("Set ABH_DATA_DIR") != std::string::npos);
}
