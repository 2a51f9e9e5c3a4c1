// Materialization: copies a revision's files into a directory of its own without touching the
// user's index, working tree, HEAD or branches. WORKTREE copies the working tree's tracked and
// untracked non-ignored files as they are on disk. Submodules are materialized explicitly at their
// recorded commit (libgit2's checkout leaves them as empty directories).
#pragma once

#include <filesystem>

#include "model/identity.hpp"

namespace abh {

// `dest` must not exist or be empty. Throws with the revision and path on any failure.
void materialize(const std::filesystem::path& repo, const SourceIdentity& id,
                 const std::filesystem::path& dest);

}  // namespace abh
