// Materialization against real repositories: `git archive` is the oracle for a commit, and the
// user's index, HEAD, refs and status must come out byte-identical.
#ifdef ABH_HAVE_GIT

#include <doctest/doctest.h>

#include "git/materialize.hpp"
#include "git_test_repo.hpp"
#include "model/identity.hpp"
#include "system/sha256.hpp"

using namespace abh;
using namespace abh::test;

namespace {

struct RepoState {
  std::string index_sha256, status, head, refs;
  bool operator==(const RepoState&) const = default;
};

RepoState state_of(const GitRepo& r) {
  return {sha256_file(r.root() / ".git/index"), r.git("status --porcelain=v1 -uall"),
          r.git("rev-parse HEAD") + r.git("symbolic-ref HEAD"), r.git("for-each-ref")};
}

// lib (with a nested submodule core) at two commits; repo records lib's first commit.
struct SubmoduleFixture {
  TempDir tmp;
  GitRepo core{tmp.path() / "core"};
  GitRepo lib{tmp.path() / "lib"};
  GitRepo repo{tmp.path() / "repo"};
  std::string lib1;
  fs::path sub;
  SubmoduleFixture() {
    core.write("core.h", "// core\n");
    core.commit_all("core");
    lib.write("lib.h", "int lib();\n");
    lib.git("submodule add -q " + quote(core.root()) + " deps/core");
    lib1 = lib.commit_all("lib one");
    repo.write("main.cpp", "int main() {}\n");
    repo.write(".gitignore", "*.log\nbuild/\n");
    repo.git("submodule add -q " + quote(lib.root()) + " third_party/lib");
    repo.git("submodule update -q --init --recursive");
    repo.commit_all("with lib");
    sub = repo.root() / "third_party/lib";
  }
};

}  // namespace

TEST_CASE("materialize: a commit gives exactly its tree and the user repo is untouched") {
  TempDir tmp;
  GitRepo repo(tmp.path() / "repo");
  repo.write("a.txt", "first\n");
  repo.write("run.sh", "#!/bin/sh\necho run\n");
  set_executable(repo.root() / "run.sh", true);
  repo.write("dir/nested/x.txt", "x\n");
  repo.write("data.bin", std::string("\x00\x01\xff", 3));
  repo.write(".gitignore", "*.log\n");
  fs::create_symlink("a.txt", repo.root() / "link");
  const std::string first = repo.commit_all("first");
  repo.write("a.txt", "second\n");
  repo.write("later.txt", "later\n");
  repo.commit_all("second");
  // A dirty working tree that materialization must neither copy nor disturb.
  repo.write("a.txt", "unstaged\n");
  repo.write("staged.txt", "staged\n");
  repo.git("add staged.txt");
  repo.write("untracked.txt", "untracked\n");
  repo.write("x.log", "ignored\n");

  const RepoState before = state_of(repo);
  const SourceIdentity id = compute_source_identity(repo.root(), "HEAD~1");
  REQUIRE(id.commit == first);
  const fs::path dest = tmp.path() / "out/variant";
  materialize(repo.root(), id, dest);

  fs::create_directories(tmp.path() / "archive");
  sh(git_cli(repo.root()) + "archive --format=tar " + first + " | tar -x -C " +
     quote(tmp.path() / "archive"));
  const auto got = snapshot_tree(dest);
  CHECK(got == snapshot_tree(tmp.path() / "archive"));
  CHECK(got.at("run.sh") == "exec:#!/bin/sh\necho run\n");
  CHECK(got.at("a.txt") == "file:first\n");
  CHECK(got.at("link") == "link:a.txt");
  CHECK(got.count("later.txt") == 0);
  CHECK(got.count("staged.txt") == 0);
  CHECK(got.count(".git") == 0);

  CHECK(state_of(repo) == before);
  CHECK(read_file(repo.root() / "a.txt") == "unstaged\n");
}

TEST_CASE("materialize: submodules come out at the recorded commits or fail clearly") {
  SubmoduleFixture f;
  // The submodule's checkout moves on; the superproject's commit still records lib1.
  write_file(f.sub / "lib.h", "int lib(int);\n");
  write_file(f.sub / "lib.cpp", "int lib(int) { return 0; }\n");
  sh(git_cli(f.sub) + "add -A");
  sh(git_cli(f.sub) + "commit -q -m 'lib two'");
  const RepoState before = state_of(f.repo);
  const fs::path sub_index = f.repo.root() / ".git/modules/third_party/lib/index";
  const std::string sub_index_sha = sha256_file(sub_index);

  const SourceIdentity id = compute_source_identity(f.repo.root(), "HEAD");
  REQUIRE(id.submodules.size() == 1);
  CHECK(id.submodules[0].commit == f.lib1);
  const fs::path dest = f.tmp.path() / "out";
  materialize(f.repo.root(), id, dest);
  CHECK(read_file(dest / "main.cpp") == "int main() {}\n");
  CHECK(read_file(dest / "third_party/lib/lib.h") == "int lib();\n");
  CHECK_FALSE(fs::exists(dest / "third_party/lib/lib.cpp"));
  CHECK(read_file(dest / "third_party/lib/deps/core/core.h") == "// core\n");  // nested
  CHECK_FALSE(fs::exists(dest / "third_party/lib/.git"));

  CHECK(state_of(f.repo) == before);
  CHECK(sha256_file(sub_index) == sub_index_sha);

  // A clone whose submodule was never initialised has the gitlink but not the repository.
  sh(git_cli(f.tmp.path()) + "clone -q " + quote(f.repo.root()) + " clone");
  const fs::path clone = f.tmp.path() / "clone";
  for (std::string rev : {"HEAD", "WORKTREE"}) {
    CAPTURE(rev);
    const SourceIdentity cid = compute_source_identity(clone, rev);
    REQUIRE(cid.submodules.size() == 1);
    CHECK(cid.submodules[0].commit == f.lib1);  // the gitlink, as nothing is checked out
    const fs::path cdest = f.tmp.path() / ("out-" + rev);
    std::string msg = any_error_of([&] { materialize(clone, cid, cdest); });
    CHECK(contains(msg, "third_party/lib"));
    CHECK(contains(msg, "git submodule update --init"));
    CHECK_FALSE(fs::exists(cdest));  // nothing half-written is left behind
  }
}

TEST_CASE("materialize: WORKTREE copies what its identity covers") {
  SubmoduleFixture f;
  f.repo.write("gone.txt", "tracked, then deleted\n");
  f.repo.write("run.sh", "#!/bin/sh\n");
  set_executable(f.repo.root() / "run.sh", true);
  f.repo.commit_all("more");
  f.repo.write("main.cpp", "int main() { return 1; }\n");  // unstaged
  f.repo.write("staged.cpp", "int s;\n");
  f.repo.git("add staged.cpp");
  fs::remove(f.repo.root() / "gone.txt");
  f.repo.write("new/u.txt", "untracked\n");
  f.repo.write("new/tool.sh", "#!/bin/sh\n");
  set_executable(f.repo.root() / "new/tool.sh", true);
  f.repo.write("trace.log", "ignored\n");
  f.repo.write("build/obj.o", "ignored\n");
  write_file(f.sub / "lib.h", "int lib(double);\n");  // dirty submodule
  write_file(f.sub / "sub_untracked.h", "// new\n");

  const RepoState before = state_of(f.repo);
  const SourceIdentity id = compute_source_identity(f.repo.root(), kWorktree);
  REQUIRE(id.submodules.size() == 1);
  CHECK(id.submodules[0].dirty);
  const fs::path dest = f.tmp.path() / "out";
  materialize(f.repo.root(), id, dest);

  const auto got = snapshot_tree(dest);
  CHECK(got.at("main.cpp") == "file:int main() { return 1; }\n");
  CHECK(got.at("staged.cpp") == "file:int s;\n");
  CHECK(got.at("run.sh") == "exec:#!/bin/sh\n");
  CHECK(got.at("new/u.txt") == "file:untracked\n");
  CHECK(got.at("new/tool.sh") == "exec:#!/bin/sh\n");
  CHECK(got.at(".gitignore") == "file:*.log\nbuild/\n");
  CHECK(got.at("third_party/lib/lib.h") == "file:int lib(double);\n");
  CHECK(got.at("third_party/lib/sub_untracked.h") == "file:// new\n");
  CHECK(got.at("third_party/lib/deps/core/core.h") == "file:// core\n");
  CHECK(got.count("gone.txt") == 0);
  CHECK(got.count("trace.log") == 0);
  CHECK(got.count("build") == 0);
  CHECK(got.count(".git") == 0);
  CHECK(got.count("third_party/lib/.git") == 0);
  CHECK(got.count(".gitmodules") == 1);

  CHECK(state_of(f.repo) == before);
  CHECK(compute_source_identity(f.repo.root(), kWorktree) == id);

  // An edit after the identity was computed: the copy would not be what was identified.
  f.repo.write("main.cpp", "int main() { return 2; }\n");
  const fs::path again = f.tmp.path() / "again";
  std::string msg = any_error_of([&] { materialize(f.repo.root(), id, again); });
  CHECK(contains(msg, "changed since its identity was computed"));
  CHECK_FALSE(fs::exists(again));  // nothing half-written is left behind
}

TEST_CASE("materialize: a destination that is not new and empty is refused") {
  TempDir tmp;
  GitRepo repo(tmp.path() / "repo");
  repo.write("a.txt", "a\n");
  repo.write(".gitignore", "runs/\n");
  repo.commit_all("a");
  const SourceIdentity id = compute_source_identity(repo.root(), "HEAD");

  const fs::path full = tmp.path() / "full";
  write_file(full / "keep.txt", "mine\n");
  std::string msg = any_error_of([&] { materialize(repo.root(), id, full); });
  CHECK(contains(msg, "not empty"));
  CHECK(contains(msg, full.string()));
  CHECK(read_file(full / "keep.txt") == "mine\n");  // untouched

  write_file(tmp.path() / "file", "x");
  CHECK(contains(any_error_of([&] { materialize(repo.root(), id, tmp.path() / "file"); }),
                 "not a directory"));

  fs::create_directories(tmp.path() / "empty");
  materialize(repo.root(), id, tmp.path() / "empty");
  CHECK(read_file(tmp.path() / "empty/a.txt") == "a\n");

  // Inside the work tree, WORKTREE may only go where git does not look.
  const SourceIdentity wt = compute_source_identity(repo.root(), kWorktree);
  msg = any_error_of([&] { materialize(repo.root(), wt, repo.root() / "variants/b"); });
  CHECK(contains(msg, "inside the working tree"));
  CHECK_FALSE(fs::exists(repo.root() / "variants"));
  materialize(repo.root(), wt, repo.root() / "runs/1/b");
  CHECK(read_file(repo.root() / "runs/1/b/a.txt") == "a\n");
  CHECK(compute_source_identity(repo.root(), kWorktree) == wt);
}

#endif  // ABH_HAVE_GIT
