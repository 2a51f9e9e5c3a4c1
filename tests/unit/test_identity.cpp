// Source identity against real repositories; the git CLI is the oracle.
#ifdef ABH_HAVE_GIT

#include <doctest/doctest.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "git_test_repo.hpp"
#include "model/identity.hpp"
#include "system/sha256.hpp"

using namespace abh;
using namespace abh::test;

namespace {

// A repository with text, executable, symlink, binary and ignored content in its first commit.
struct Fixture {
  TempDir tmp;
  GitRepo repo{tmp.path() / "repo"};
  std::string first, second;
  Fixture() {
    repo.write("a.txt", "hello\n");
    repo.write("src/b.cpp", "int b() { return 1; }\n");
    repo.write("run.sh", "#!/bin/sh\necho run\n");
    set_executable(repo.root() / "run.sh", true);
    repo.write("data.bin", std::string("\x00\x01\x02\xff binary\x00", 13));
    repo.write(".gitignore", "*.log\nbuild/\n");
    fs::create_symlink("a.txt", repo.root() / "link");
    first = repo.commit_all("first");
    repo.write("a.txt", "hello again\n");
    second = repo.commit_all("second");
    repo.git("tag v1 " + first);
  }
  SourceIdentity worktree() const { return compute_source_identity(repo.root(), kWorktree); }
  // The documented CLI equivalent of tracked_diff_sha256 (see core/git/source_identity.cpp).
  std::string cli_diff() const {
    return repo.git("-c core.compression=-1 diff HEAD --binary --full-index --no-renames");
  }
  std::string cli_diff_sha256() const { return sha256_hex(cli_diff()); }
};

}  // namespace

TEST_CASE("identity: a revision is its commit id") {
  Fixture f;
  for (const std::string& rev :
       std::vector<std::string>{"HEAD~1", "v1", "main", "HEAD", f.first.substr(0, 12)}) {
    CAPTURE(rev);
    SourceIdentity id = compute_source_identity(f.repo.root(), rev);
    CHECK(id.kind == "commit");
    CHECK(id.requested == rev);
    CHECK(id.commit == trim(f.repo.git("rev-parse '" + rev + "^{commit}'")));
    CHECK(id.tracked_diff_sha256.empty());
    CHECK(id.untracked_sha256.empty());
    CHECK(id.submodules.empty());
    CHECK(id.digest == identity_digest(id));
  }
  CHECK(compute_source_identity(f.repo.root(), "v1").digest ==
        compute_source_identity(f.repo.root(), f.first).digest);
  CHECK(compute_source_identity(f.repo.root(), "HEAD").digest !=
        compute_source_identity(f.repo.root(), "HEAD~1").digest);
  // A subdirectory of the work tree names the same repository, as with the git CLI.
  CHECK(compute_source_identity(f.repo.root() / "src", "HEAD").commit == f.second);
}

TEST_CASE("identity: a clean WORKTREE is HEAD with digests of nothing") {
  Fixture f;
  SourceIdentity id = f.worktree();
  CHECK(id.kind == "worktree");
  CHECK(id.requested == "WORKTREE");
  CHECK(id.commit == f.second);
  CHECK(id.tracked_diff_sha256 == sha256_hex(""));
  CHECK(id.tracked_diff_sha256 == f.cli_diff_sha256());
  CHECK(id.untracked_sha256 == Sha256().hex());
  CHECK(id.digest == identity_digest(id));
  CHECK(id.digest != compute_source_identity(f.repo.root(), "HEAD").digest);
  CHECK(f.worktree() == id);  // deterministic
}

TEST_CASE("identity: WORKTREE follows every change git sees and no ignored file") {
  Fixture f;
  std::set<std::string> seen;
  const SourceIdentity clean = f.worktree();
  seen.insert(clean.digest);
  auto expect_new = [&](const std::string& what) {
    CAPTURE(what);
    SourceIdentity id = f.worktree();
    CHECK(id.commit == f.second);
    CHECK(id.tracked_diff_sha256 == f.cli_diff_sha256());
    CHECK(seen.insert(id.digest).second);
    return id;
  };

  // Same size as before and within the index's timestamp second: the racy-git case.
  f.repo.write("a.txt", "HELLO AGAIN\n");
  expect_new("unstaged edit");
  f.repo.write("a.txt", "hello again\n");
  CHECK(f.worktree() == clean);  // undoing the edit restores the identity

  f.repo.write("src/b.cpp", "int b() { return 2; }\n");
  f.repo.git("add src/b.cpp");
  expect_new("staged edit");
  f.repo.write("src/b.cpp", "int b() { return 3; }\n");
  expect_new("staged and unstaged edit of one file");

  f.repo.write("new/dir/u.txt", "untracked\n");
  SourceIdentity untracked = expect_new("untracked file in a new directory");
  CHECK(untracked.untracked_sha256 != clean.untracked_sha256);
  f.repo.write("new/dir/u.txt", "UNTRACKED\n");
  SourceIdentity edited = expect_new("untracked file's content");
  CHECK(edited.tracked_diff_sha256 == untracked.tracked_diff_sha256);

  f.repo.write("data.bin", std::string("\x00\x01\x02\xfe binary\x00", 13));
  expect_new("binary file edit");
  CHECK(contains(f.cli_diff(), "GIT binary patch"));

  set_executable(f.repo.root() / "run.sh", false);
  expect_new("executable bit cleared");

  fs::remove(f.repo.root() / "link");
  fs::create_symlink("src/b.cpp", f.repo.root() / "link");
  expect_new("symlink retargeted");

  f.repo.git("mv run.sh run2.sh");
  expect_new("file renamed in the index");
  f.repo.git("rm -q -f --cached src/b.cpp");
  expect_new("file removed from the index but kept on disk");

  const SourceIdentity before_ignored = f.worktree();
  f.repo.write("trace.log", "ignored\n");
  f.repo.write("build/out.o", "ignored too\n");
  CHECK(f.worktree() == before_ignored);
}

TEST_CASE("identity: untracked files are hashed by path and mode and content") {
  Fixture f;
  f.repo.write("u1", "same");
  const SourceIdentity one = f.worktree();
  fs::rename(f.repo.root() / "u1", f.repo.root() / "u2");
  const SourceIdentity renamed = f.worktree();
  CHECK(renamed.untracked_sha256 != one.untracked_sha256);
  set_executable(f.repo.root() / "u2", true);
  CHECK(f.worktree().untracked_sha256 != renamed.untracked_sha256);
  // Two files whose concatenated bytes are equal must still differ (length-prefixed fields).
  fs::remove(f.repo.root() / "u2");
  f.repo.write("p", "ab");
  f.repo.write("q", "c");
  const std::string split1 = f.worktree().untracked_sha256;
  f.repo.write("p", "a");
  f.repo.write("q", "bc");
  CHECK(f.worktree().untracked_sha256 != split1);
}

TEST_CASE("identity: a nested repository that is not a submodule is refused") {
  Fixture f;
  GitRepo nested(f.repo.root() / "vendor");
  nested.write("x", "x");
  nested.commit_all("x");
  std::string msg = any_error_of([&] { f.worktree(); });
  CHECK(contains(msg, "vendor/"));
  CHECK(contains(msg, "submodule"));
}

TEST_CASE("identity: a WORKTREE with merge conflicts is refused") {
  Fixture f;
  f.repo.git("checkout -q -b other");
  f.repo.write("a.txt", "theirs\n");
  f.repo.commit_all("theirs");
  f.repo.git("checkout -q main");
  f.repo.write("a.txt", "ours\n");
  f.repo.commit_all("ours");
  CHECK(run_command(git_cli(f.repo.root()) + "merge -q other >/dev/null 2>&1").status != 0);
  std::string msg = any_error_of([&] { f.worktree(); });
  CHECK(contains(msg, "unresolved merge conflicts (a.txt)"));
  f.repo.git("add a.txt");  // resolved
  CHECK(f.worktree().commit == f.repo.head());
}

TEST_CASE("identity: submodule commits and dirty state are recorded") {
  TempDir tmp;
  GitRepo lib(tmp.path() / "lib");
  lib.write("lib.h", "int lib();\n");
  const std::string lib1 = lib.commit_all("lib one");
  GitRepo repo(tmp.path() / "repo");
  repo.write("main.cpp", "int main() {}\n");
  repo.git("submodule add -q " + quote(lib.root()) + " third_party/lib");
  repo.commit_all("with lib");
  const fs::path sub = repo.root() / "third_party/lib";

  SourceIdentity at_head = compute_source_identity(repo.root(), "HEAD");
  REQUIRE(at_head.submodules.size() == 1);
  CHECK(at_head.submodules[0].path == "third_party/lib");
  CHECK(at_head.submodules[0].commit == lib1);
  CHECK(trim(repo.git("ls-tree HEAD third_party/lib")).find(lib1) != std::string::npos);
  CHECK_FALSE(at_head.submodules[0].dirty);

  SourceIdentity clean = compute_source_identity(repo.root(), kWorktree);
  REQUIRE(clean.submodules.size() == 1);
  CHECK(clean.submodules[0] == SubmoduleState{"third_party/lib", lib1, false, ""});

  std::set<std::string> seen{clean.digest};
  write_file(sub / "lib.h", "int lib(int);\n");
  SourceIdentity modified = compute_source_identity(repo.root(), kWorktree);
  CHECK(modified.submodules[0].commit == lib1);
  CHECK(modified.submodules[0].dirty);
  CHECK_FALSE(modified.submodules[0].content_sha256.empty());
  CHECK(seen.insert(modified.digest).second);
  // libgit2 and the CLI agree on a dirty submodule's line in the diff ("Subproject commit
  // ...-dirty").
  CHECK(
      modified.tracked_diff_sha256 ==
      sha256_hex(repo.git("-c core.compression=-1 diff HEAD --binary --full-index --no-renames")));

  // The submodule's content digest survives the JSON mapping and is covered by the digest.
  CHECK(source_identity_from_json(to_json(modified), "plan.json") == modified);
  json tampered = to_json(modified);
  tampered["submodules"][0]["content_sha256"] = clean.digest;
  CHECK(contains(any_error_of([&] { source_identity_from_json(tampered, "plan.json"); }),
                 "field 'digest'"));

  write_file(sub / "lib.h", "int lib(long);\n");
  SourceIdentity modified_again = compute_source_identity(repo.root(), kWorktree);
  CHECK(modified_again.submodules[0].dirty);
  CHECK(seen.insert(modified_again.digest).second);

  write_file(sub / "lib.h", "int lib();\n");
  CHECK(compute_source_identity(repo.root(), kWorktree) == clean);

  write_file(sub / "extra.h", "untracked\n");
  SourceIdentity untracked = compute_source_identity(repo.root(), kWorktree);
  CHECK(untracked.submodules[0].dirty);
  CHECK(seen.insert(untracked.digest).second);
  fs::remove(sub / "extra.h");

  write_file(sub / "lib.cpp", "int lib() { return 0; }\n");
  sh(git_cli(sub) + "add -A");
  sh(git_cli(sub) + "commit -q -m 'lib two'");
  const std::string lib2 = trim(sh(git_cli(sub) + "rev-parse HEAD"));
  SourceIdentity moved = compute_source_identity(repo.root(), kWorktree);
  CHECK(moved.submodules[0] == SubmoduleState{"third_party/lib", lib2, false, ""});
  CHECK(
      moved.tracked_diff_sha256 ==
      sha256_hex(repo.git("-c core.compression=-1 diff HEAD --binary --full-index --no-renames")));
  CHECK(seen.insert(moved.digest).second);
  // The commit's identity still records the gitlink, not what is checked out.
  CHECK(compute_source_identity(repo.root(), "HEAD").submodules[0].commit == lib1);
}

TEST_CASE("identity: an unknown revision is an error naming it and the fix") {
  Fixture f;
  std::string msg = any_error_of([&] { compute_source_identity(f.repo.root(), "no-such-branch"); });
  CHECK(contains(msg, "'no-such-branch'"));
  CHECK(contains(msg, "not found"));
  CHECK(contains(msg, f.repo.root().string()));
  CHECK(contains(msg, "WORKTREE"));

  msg = any_error_of([&] { compute_source_identity(f.repo.root(), "HEAD^{tree}"); });
  CHECK(contains(msg, "names a tree, not a commit"));
  msg = any_error_of([&] { compute_source_identity(f.repo.root(), ""); });
  CHECK(contains(msg, "empty revision"));
}

TEST_CASE("identity: a directory outside any repository is a clear error") {
  TempDir tmp;
  std::string msg = any_error_of([&] { compute_source_identity(tmp.path(), "HEAD"); });
  CHECK(contains(msg, tmp.path().string()));
  CHECK(contains(msg, "not inside a git repository"));
  msg = any_error_of([&] { compute_source_identity(tmp.path() / "missing", "HEAD"); });
  CHECK(contains(msg, "does not exist"));

  GitRepo empty(tmp.path() / "empty");
  msg = any_error_of([&] { compute_source_identity(empty.root(), kWorktree); });
  CHECK(contains(msg, "no commits yet"));
  sh(git_cli(tmp.path()) + "init -q --bare bare.git");
  msg = any_error_of([&] { compute_source_identity(tmp.path() / "bare.git", kWorktree); });
  CHECK(contains(msg, "bare"));
}

TEST_CASE("identity: a repository owned by another user is explained clearly") {
  // Only root can give a repository away; elsewhere this case cannot be set up.
  if (::geteuid() != 0) {
    MESSAGE("skipped: needs root to chown a repository to another user");
    return;
  }
  Fixture f;
  sh("chown -R 65534:65534 " + quote(f.repo.root()));
  std::string msg = any_error_of([&] { compute_source_identity(f.repo.root(), "HEAD"); });
  CAPTURE(msg);
  CHECK(contains(msg, "belongs to another user"));
  CHECK(contains(msg, "safe.directory " + f.repo.root().string()));
}

#endif  // ABH_HAVE_GIT
