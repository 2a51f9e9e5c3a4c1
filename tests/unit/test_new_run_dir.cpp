// A run directory while its run is planned (orchestrator/new_run_dir.hpp): removed with everything
// in it when its start fails, never what a link in it points to nor anything beside it; the runs
// root only when it was made for it and is left empty; kept once the plan is written.
#ifdef ABH_HAVE_ORCHESTRATOR

#include <doctest/doctest.h>

#include "new_run_dir.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

TEST_CASE("new run dir: a failed start leaves nothing, and removes nothing else") {
  test::TempDir tmp;
  const fs::path runs = tmp.path() / "deep" / "runs";
  test::write(tmp.path() / "precious", "precious\n");
  {
    std::string id = "r1";
    NewRunDir dir(runs, id);
    CHECK(dir.path() == runs / "r1");
    test::write(dir.path() / "variants" / "baseline" / "build.log", "log\n");
    fs::create_symlink(tmp.path() / "precious", dir.path() / "link");
    fs::create_directory_symlink(tmp.path(), dir.path() / "dirlink");
  }
  CHECK_FALSE(fs::exists(tmp.path() / "deep"));
  CHECK(test::slurp(tmp.path() / "precious") == "precious\n");
  // A runs root that was there stays, with what else is in it.
  fs::create_directories(runs / "other");
  {
    std::string id = "r2";
    NewRunDir dir(runs, id);
  }
  CHECK_FALSE(fs::exists(runs / "r2"));
  CHECK(fs::is_directory(runs / "other"));
  // Kept: the plan was written (or a failed build's log is the evidence).
  {
    std::string id;
    NewRunDir dir(runs, id);
    CHECK_FALSE(id.empty());
    dir.keep();
  }
  CHECK(std::distance(fs::directory_iterator(runs), fs::directory_iterator{}) == 2);
}

#endif
