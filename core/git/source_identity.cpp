#include "git/source_identity.hpp"

#include <sys/stat.h>

#include <array>
#include <exception>
#include <fstream>

#include "git/worktree.hpp"
#include "system/error.hpp"
#include "system/sha256.hpp"

namespace abh::git {

namespace {

// The command that reproduces the tracked-diff digest with the git CLI (run with no global or
// system configuration, e.g. GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1):
//   git -c core.compression=-1 diff HEAD --binary --full-index --no-renames | sha256sum
// Plain `git diff HEAD --binary` differs in three config-dependent ways that would make the digest
// depend on the user rather than the sources: binary patches are deflated at core.compression
// (git's default is level 1, libgit2 always uses zlib's default), short object ids grow with the
// repository's size (core.abbrev=auto), and diff.renames turns delete+add into a rename.
std::string tracked_diff_sha256(git_repository* repo, git_commit* head) {
  git_tree* raw_tree = nullptr;
  check(git_commit_tree(&raw_tree, head), "cannot read HEAD's tree in " + describe(repo));
  Tree tree(raw_tree);
  git_diff_options opts;
  check(git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION), "git_diff_options_init");
  opts.flags |= GIT_DIFF_SHOW_BINARY;
  opts.id_abbrev = GIT_OID_HEXSZ;
  git_diff* raw_diff = nullptr;
  check(git_diff_tree_to_workdir_with_index(&raw_diff, repo, tree.get(), &opts),
        "cannot diff the working tree of " + describe(repo) + " against HEAD");
  Diff diff(raw_diff);
  // Printed line by line into the digest, as git_diff_to_buf would lay it out, with one fix: git
  // prints no "index" line when both sides have the same object id (a submodule that is only
  // dirty), while libgit2 prints "index X..X".
  struct Sink {
    Sha256 hash;
    std::exception_ptr error;
  } sink;
  auto print = [](const git_diff_delta* delta, const git_diff_hunk*, const git_diff_line* line,
                  void* payload) -> int {
    auto* out = static_cast<Sink*>(payload);
    try {
      std::string_view content(line->content, line->content_len);
      if (line->origin == GIT_DIFF_LINE_FILE_HDR &&
          git_oid_equal(&delta->old_file.id, &delta->new_file.id)) {
        const size_t at = content.find("\nindex ");
        if (at != std::string_view::npos) {
          const size_t end = content.find('\n', at + 1);
          out->hash.update(content.substr(0, at + 1));
          if (end != std::string_view::npos) out->hash.update(content.substr(end + 1));
          return 0;
        }
      }
      if (line->origin == GIT_DIFF_LINE_ADDITION || line->origin == GIT_DIFF_LINE_DELETION ||
          line->origin == GIT_DIFF_LINE_CONTEXT)
        out->hash.update(std::string_view(&line->origin, 1));
      out->hash.update(content);
      return 0;
    } catch (...) {
      out->error = std::current_exception();
      return -1;
    }
  };
  int rc = git_diff_print(diff.get(), GIT_DIFF_FORMAT_PATCH, print, &sink);
  if (sink.error) std::rethrow_exception(sink.error);
  check(rc, "cannot format the working tree's diff of " + describe(repo));
  return sink.hash.hex();
}

// Each untracked file contributes its path, its git mode (100644, 100755 or 120000) and its
// content (a symlink's target), each length-prefixed, in sorted path order.
std::string untracked_sha256(git_repository* repo) {
  const std::filesystem::path wd = workdir(repo, "hashing untracked files");
  Sha256 h;
  for (const auto& rel : untracked_files(repo)) {
    const std::filesystem::path p = wd / rel;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0)
      throw Error("untracked file " + p.string() + " vanished while it was being hashed: retry");
    h.field(rel);
    if (S_ISLNK(st.st_mode)) {
      h.field("120000").field(std::filesystem::read_symlink(p).string());
      continue;
    }
    if (!S_ISREG(st.st_mode))
      throw Error("untracked path " + p.string() +
                  " is neither a regular file nor a symlink: remove it or list it in .gitignore");
    h.field((st.st_mode & S_IXUSR) ? "100755" : "100644");
    // Streamed, with the same length prefix as Sha256::field, so large files need no copy.
    std::ifstream in(p, std::ios::binary);
    if (!in) throw Error("cannot read untracked file " + p.string() + " to hash it");
    h.update(std::to_string(st.st_size)).update(":");
    std::array<char, 1 << 16> buf{};
    std::uintmax_t total = 0;
    while (in) {
      in.read(buf.data(), buf.size());
      auto got = static_cast<size_t>(in.gcount());
      total += got;
      h.update(std::string_view(buf.data(), got));
    }
    if (in.bad() || total != static_cast<std::uintmax_t>(st.st_size))
      throw Error("untracked file " + p.string() + " changed while it was being hashed: retry");
  }
  return h.hex();
}

// libgit2 renders a conflicted path as a bare mode change without content, so edits to it would
// not reach the digest; a tree in the middle of a merge is no benchmark candidate anyway.
void refuse_conflicts(git_repository* repo) {
  git_index* raw = nullptr;
  check(git_repository_index(&raw, repo), "cannot read the index of " + describe(repo));
  Index index(raw);
  check(git_index_read(index.get(), 0), "cannot read the index of " + describe(repo));
  if (!git_index_has_conflicts(index.get())) return;
  std::string paths;
  const size_t n = git_index_entrycount(index.get());
  for (size_t i = 0; i < n && paths.size() < 200; ++i) {
    const git_index_entry* e = git_index_get_byindex(index.get(), i);
    if (git_index_entry_is_conflict(e) &&
        paths.find(std::string(" ") + e->path + ",") == std::string::npos)
      paths += std::string(" ") + e->path + ",";
  }
  paths.pop_back();
  throw Error("the working tree of " + describe(repo) + " has unresolved merge conflicts (" +
              paths.substr(1) +
              "): resolve them and `git add` the files, or abort the merge, before using WORKTREE");
}

SourceIdentity worktree_identity(git_repository* repo) {
  SourceIdentity id;
  id.kind = "worktree";
  workdir(repo, "identifying WORKTREE");
  refuse_conflicts(repo);
  Commit head = head_commit(repo);
  id.commit = oid_hex(git_commit_id(head.get()));
  id.tracked_diff_sha256 = tracked_diff_sha256(repo, head.get());
  id.untracked_sha256 = untracked_sha256(repo);
  for (const auto& s : worktree_submodules(repo)) {
    SubmoduleState state{s.path, s.commit, s.dirty, ""};
    if (s.dirty) {
      // A dirty submodule is necessarily initialised; its own WORKTREE identity covers its diff,
      // untracked files and nested submodules.
      Repository sub = open_submodule(repo, s.path);
      try {
        state.content_sha256 = source_identity(sub.get(), kWorktree).digest;
      } catch (...) {
        rethrow_with_context("submodule '" + s.path + "' of " + describe(repo));
      }
    }
    id.submodules.push_back(std::move(state));
  }
  return id;
}

SourceIdentity commit_identity(git_repository* repo, const std::string& rev) {
  SourceIdentity id;
  id.kind = "commit";
  Commit commit = resolve_commit(repo, rev);
  id.commit = oid_hex(git_commit_id(commit.get()));
  git_tree* raw_tree = nullptr;
  check(git_commit_tree(&raw_tree, commit.get()),
        "cannot read the tree of revision '" + rev + "' in " + describe(repo));
  Tree tree(raw_tree);
  for (auto& link : tree_gitlinks(repo, tree.get()))
    id.submodules.push_back({std::move(link.path), std::move(link.commit), false, ""});
  return id;
}

}  // namespace

SourceIdentity source_identity(git_repository* repo, const std::string& rev) {
  SourceIdentity id = rev == kWorktree ? worktree_identity(repo) : commit_identity(repo, rev);
  id.requested = rev;
  id.digest = identity_digest(id);
  return id;
}

}  // namespace abh::git

namespace abh {

SourceIdentity compute_source_identity(const std::filesystem::path& repo, const std::string& rev) {
  git::Repository r = git::open_repository(repo);
  return git::source_identity(r.get(), rev);
}

}  // namespace abh
