// The handle-based form of visible_to_git (git/ignore.hpp), for code in core/git that already holds
// an open repository.
#pragma once

#include <filesystem>

#include "git/repository.hpp"

namespace abh::git {

// True when `dir` is inside `repo`'s work tree and not ignored; `worktree` receives the work tree.
bool visible_in(git_repository* repo, const std::filesystem::path& dir,
                std::filesystem::path* worktree = nullptr);

}  // namespace abh::git
