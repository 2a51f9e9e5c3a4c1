// Thin RAII layer over libgit2 1.5: every handle has an owner, every call goes through check(),
// and every failure becomes an abh::Error that names the repository and the fix. Only code in
// core/git includes this header; the worker never links libgit2.
#pragma once

#include <git2.h>

#include <filesystem>
#include <memory>
#include <string>

namespace abh::git {

// libgit2 needs one git_libgit2_init() per process before any call. Call this first in every
// entry point; it is cheap after the first time and shuts libgit2 down at process exit.
void ensure_init();

// Throws abh::Error("<context>: <libgit2's last message>") when rc < 0; returns rc otherwise.
int check(int rc, const std::string& context);
// libgit2's last error message, or a generic one when libgit2 did not set one.
std::string last_error_message();

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
template <typename T, void (*Free)(T*)>
using Owner = std::unique_ptr<T, Deleter<T, Free>>;

using Repository = Owner<git_repository, git_repository_free>;
using Object = Owner<git_object, git_object_free>;
using Reference = Owner<git_reference, git_reference_free>;
using Commit = Owner<git_commit, git_commit_free>;
using Tree = Owner<git_tree, git_tree_free>;
using TreeEntry = Owner<git_tree_entry, git_tree_entry_free>;
using Blob = Owner<git_blob, git_blob_free>;
using Diff = Owner<git_diff, git_diff_free>;
using StatusList = Owner<git_status_list, git_status_list_free>;
using Submodule = Owner<git_submodule, git_submodule_free>;
using Index = Owner<git_index, git_index_free>;

// git_buf is a struct that owns its heap block; this gives it a destructor.
class Buf {
 public:
  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { git_buf_dispose(&buf_); }
  git_buf* get() { return &buf_; }
  std::string_view view() const { return {buf_.ptr ? buf_.ptr : "", buf_.size}; }

 private:
  git_buf buf_ = GIT_BUF_INIT;
};

// Opens the repository that contains `path` (searching upwards like the git CLI). A directory
// that is not in a repository, or a repository owned by another user (which libgit2 reports with
// a misleading message), is a clear error naming the path and the fix.
Repository open_repository(const std::filesystem::path& path);

// The repository's work tree (absolute, no trailing slash); throws for a bare repository, naming
// `why` (what needed the work tree).
std::filesystem::path workdir(git_repository* repo, const std::string& why);

// A printable name for the repository in messages: its work tree, or its git dir when bare.
std::string describe(git_repository* repo);

// Resolves a revision expression to a commit: not found, ambiguous and non-commit objects each get
// their own message naming the revision, the repository and what to type instead.
Commit resolve_commit(git_repository* repo, const std::string& rev);

// HEAD's commit; an unborn or detached-and-broken HEAD is an error naming the repository.
Commit head_commit(git_repository* repo);

Commit lookup_commit(git_repository* repo, const std::string& hex, const std::string& what);

std::string oid_hex(const git_oid* oid);

}  // namespace abh::git
