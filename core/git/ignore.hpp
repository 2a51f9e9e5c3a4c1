// Whether git sees a directory: a directory inside a repository's work tree that git does not
// ignore becomes untracked files of a WORKTREE identity as soon as anything is written there. The
// orchestrator asks before it creates a run directory (abharness never writes into the user's
// repository, not even a .gitignore), materialization before it copies a WORKTREE.
#pragma once

#include <filesystem>
#include <optional>

namespace abh {

// The work tree of the repository at `repo` when `dir` (which need not exist yet) lies inside it
// and git does not ignore it; nullopt when it lies outside or is ignored. Symbolic links in either
// path are resolved first, as git would see them.
std::optional<std::filesystem::path> visible_to_git(const std::filesystem::path& repo,
                                                    const std::filesystem::path& dir);

}  // namespace abh
