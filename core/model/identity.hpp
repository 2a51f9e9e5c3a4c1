// Source identity: what exactly was measured. A revision is its commit id; the working tree
// (WORKTREE) is HEAD plus digests of everything that makes it differ from HEAD. Any error while
// computing an identity is fatal: there is no "unknown" identity.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "system/json_io.hpp"

namespace abh {

struct SubmoduleState {
  std::string path;
  std::string commit;  // the commit checked out in the submodule's work tree (or the index's)
  bool dirty = false;  // modified or untracked content inside the submodule
  // Dirty submodules only: the digest of the submodule's own WORKTREE identity, so that editing a
  // dirty submodule changes the identity (and invalidates cached builds). Empty when clean.
  std::string content_sha256;
  bool operator==(const SubmoduleState&) const = default;
};

struct SourceIdentity {
  std::string requested;            // what the user typed: "main", "HEAD~1", "WORKTREE"
  std::string kind;                 // "commit" or "worktree"
  std::string commit;               // the commit id (HEAD's for a worktree)
  std::string tracked_diff_sha256;  // worktree only: SHA-256 of the binary-safe `git diff HEAD`
                                    // (exact CLI command: core/git/source_identity.cpp)
  std::string untracked_sha256;     // worktree only: over each untracked non-ignored path+content
  std::vector<SubmoduleState> submodules;
  std::string digest;  // SHA-256 over all the fields above but `requested`

  bool operator==(const SourceIdentity&) const = default;
};

inline constexpr const char* kWorktree = "WORKTREE";

// Resolves `rev` in the repository at `repo` (a revision expression or WORKTREE).
SourceIdentity compute_source_identity(const std::filesystem::path& repo, const std::string& rev);

// Recomputes the digest from the other fields (used to check an identity read from a file).
std::string identity_digest(const SourceIdentity& id);

json to_json(const SourceIdentity& id);
SourceIdentity source_identity_from_json(const json& j, const std::string& where);

}  // namespace abh
