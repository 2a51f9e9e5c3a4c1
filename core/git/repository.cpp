#include "git/repository.hpp"

#include <system_error>

#include "system/error.hpp"

namespace abh::git {

namespace {

struct LibraryGuard {
  LibraryGuard() {
    if (git_libgit2_init() < 0)
      throw Error("libgit2: initialisation failed: " + last_error_message());
  }
  ~LibraryGuard() { git_libgit2_shutdown(); }
  LibraryGuard(const LibraryGuard&) = delete;
  LibraryGuard& operator=(const LibraryGuard&) = delete;
};

const char* kRevisionHint =
    "use a commit id, branch or tag name (e.g. main, HEAD~1, v1.2), or WORKTREE";

}  // namespace

void ensure_init() {
  // A function-local static: initialised once, thread-safely, and shut down after main returns.
  static LibraryGuard guard;
}

std::string last_error_message() {
  const git_error* e = git_error_last();
  if (e && e->message && *e->message) return e->message;
  return "unknown libgit2 error";
}

int check(int rc, const std::string& context) {
  if (rc < 0) throw Error(context + ": " + last_error_message());
  return rc;
}

Repository open_repository(const std::filesystem::path& path) {
  ensure_init();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error("repository path " + path.string() +
                " does not exist: pass the directory of your kernel's git repository");
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, path.c_str(), 0, nullptr);
  Repository repo(raw);
  std::string message = rc < 0 ? last_error_message() : "";
  // libgit2 1.5 refuses a repository whose owner is another user with GIT_ENOTFOUND and
  // "config value 'safe.directory' was not found", which reads like a missing repository or a
  // configuration bug rather than an ownership check.
  if (rc == GIT_EOWNER || message.find("not owned by current user") != std::string::npos ||
      message.find("safe.directory") != std::string::npos)
    throw Error("the git repository at " + path.string() +
                " belongs to another user, and git refuses to read repositories you do not own. "
                "Fix: run abharness as the repository's owner, or, if you trust it, run `git "
                "config --global --add safe.directory " +
                path.string() + "` (with the repository's top directory)");
  if (rc == GIT_ENOTFOUND)
    throw Error(path.string() +
                " is not inside a git repository: run abharness from your kernel's git "
                "repository or pass its path (abharness needs git to identify the sources)");
  check(rc, "cannot open the git repository at " + path.string());
  return repo;
}

std::filesystem::path workdir(git_repository* repo, const std::string& why) {
  const char* wd = git_repository_workdir(repo);
  if (!wd)
    throw Error("the git repository " + describe(repo) + " is bare (it has no working tree), so " +
                why + " is impossible: name a revision instead, or use a clone with a work tree");
  std::string s = wd;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string describe(git_repository* repo) {
  const char* wd = git_repository_workdir(repo);
  std::string s = wd ? wd : git_repository_path(repo);
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Commit resolve_commit(git_repository* repo, const std::string& rev) {
  const std::string where = describe(repo);
  if (rev.empty()) throw Error("empty revision for " + where + ": " + kRevisionHint);
  git_object* raw = nullptr;
  int rc = git_revparse_single(&raw, repo, rev.c_str());
  Object obj(raw);
  if (rc == GIT_ENOTFOUND)
    throw Error("revision '" + rev + "' not found in " + where + ": " + kRevisionHint);
  if (rc == GIT_EAMBIGUOUS)
    throw Error("revision '" + rev + "' is ambiguous in " + where +
                ": give more hex digits or the full commit id");
  if (rc == GIT_EINVALIDSPEC)
    throw Error("revision '" + rev + "' is not a valid revision expression in " + where + " (" +
                last_error_message() + "): " + kRevisionHint);
  check(rc, "cannot resolve revision '" + rev + "' in " + where);
  git_object* peeled = nullptr;
  rc = git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT);
  Object commit(peeled);
  if (rc < 0)
    throw Error("revision '" + rev + "' in " + where + " names a " +
                git_object_type2string(git_object_type(obj.get())) +
                ", not a commit: " + kRevisionHint);
  return Commit(reinterpret_cast<git_commit*>(commit.release()));
}

Commit head_commit(git_repository* repo) {
  const std::string where = describe(repo);
  int unborn = git_repository_head_unborn(repo);
  check(unborn, "cannot read HEAD of " + where);
  if (unborn == 1)
    throw Error("the git repository " + where +
                " has no commits yet (HEAD is unborn): commit the sources first, since a "
                "working tree is identified relative to HEAD");
  git_reference* raw = nullptr;
  check(git_repository_head(&raw, repo), "cannot read HEAD of " + where);
  Reference head(raw);
  git_object* peeled = nullptr;
  check(git_reference_peel(&peeled, head.get(), GIT_OBJECT_COMMIT),
        "HEAD of " + where + " does not point to a commit");
  return Commit(reinterpret_cast<git_commit*>(peeled));
}

Commit lookup_commit(git_repository* repo, const std::string& hex, const std::string& what) {
  git_oid oid;
  if (hex.size() != GIT_OID_HEXSZ || git_oid_fromstr(&oid, hex.c_str()) < 0)
    throw Error(what + ": '" + hex + "' is not a full commit id");
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, repo, &oid);
  Commit c(raw);
  if (rc == GIT_ENOTFOUND)
    throw Error(what + ": commit " + hex + " is not in the repository " + describe(repo) +
                " (fetch it, or check that this is the repository the run was planned from)");
  check(rc, what + ": cannot read commit " + hex + " in " + describe(repo));
  return c;
}

std::string oid_hex(const git_oid* oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, oid);
  return buf;
}

}  // namespace abh::git

// libgit2 1.5's PCRE2 regex backend leaks its match data when a regex does not match (fixed by
// libgit2 PR #6382, after 1.5): every diff leaks ~100 bytes inside libpcre2. Under ABH_SANITIZE
// LeakSanitizer would fail every binary that computes an identity, so exactly those allocations
// are suppressed. Our code never calls PCRE2, so no leak of ours can hide behind this pattern
// (which names the PCRE2 library: its frames are too shallow for LeakSanitizer to name the
// function).
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libpcre2-8.so\n";
}
