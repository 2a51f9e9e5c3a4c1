// Where abharness's files are found: $ABH_DATA_DIR when set (a typo is an error, not a fallback);
// else, for a binary of the build tree, the source tree's data/ and include/ and the build's bin/,
// and for any other binary (an install, a carried bundle) the install layout around it, with no
// fallback from one to the other.
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
    CHECK(resolve_data_dir() == tmp.path());
  }
  {
    const std::string typo = (tmp.path() / "dta").string();
    DataDirEnv env(typo);
    CHECK_THROWS_WITH_AS(
        resolve_data_dir(),
        doctest::Contains(("ABH_DATA_DIR=" + typo + " is not a directory").c_str()), UsageError);
  }
}

TEST_CASE("data_dir: a binary of the build tree uses the source tree") {
  const Layout l = layout_for("/b/build/tests", "/b/build", "/src",
                              {"../share/abharness", "../include", "../lib/cmake/abharness"});
  CHECK(l.build_tree);
  CHECK(l.package.empty());
  CHECK(l.bin == "/b/build/bin");
  CHECK(l.data == "/src/data");
  CHECK(l.include == "/src/include");
  // This test binary is one: it finds the source tree's data/ without ABH_DATA_DIR.
  DataDirEnv env(std::nullopt);
  CHECK(current_layout().build_tree);
  CHECK(resolve_data_dir() == fs::path(ABH_SOURCE_DIR) / "data");
  CHECK(fs::exists(current_layout().include / "abharness" / "plugin.h"));
  CHECK(fs::exists(current_layout().bin / "abharness-worker"));
}

TEST_CASE("data_dir: any other binary uses the install layout around it") {
  for (const char* exe : {"/opt/abh/bin", "/b/build-other/bin", "/b/buildx"}) {
    CAPTURE(exe);
    const Layout l = layout_for(exe, "/b/build", "/src",
                                {"../share/abharness", "../include", "../lib/cmake/abharness"});
    CHECK_FALSE(l.build_tree);
    CHECK(l.bin == exe);
    CHECK(l.data == fs::path(exe).parent_path() / "share/abharness/data");
    CHECK(l.include == fs::path(exe).parent_path() / "include");
    CHECK(l.package == fs::path(exe).parent_path() / "lib/cmake/abharness");
  }
}
