// What git sees in a repository, shared by source identity and materialization so that both agree
// on exactly the same set of files: a commit's tree entries and gitlinks, the working tree's
// untracked non-ignored files, and the submodules' states.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "git/repository.hpp"

namespace abh::git {

// Visits every entry of `tree` depth-first, a directory before its contents; `path` is relative to
// the tree's root with '/' separators. Entry names that could escape a destination directory
// ('..', '.git', a '/') make it throw: a crafted tree must not write outside a materialization.
using TreeVisitor = std::function<void(const std::string& path, const git_tree_entry* entry)>;
void walk_tree(git_repository* repo, git_tree* tree, const TreeVisitor& visit);

struct Gitlink {
  std::string path;
  std::string commit;
};
// The submodule commits a tree records, sorted by path.
std::vector<Gitlink> tree_gitlinks(git_repository* repo, git_tree* tree);

// Untracked, non-ignored files of the working tree (the ones `git status -uall` lists as '??'),
// relative to the work tree, sorted bytewise. An untracked directory that git cannot look into (a
// nested repository that is not a submodule) is an error: its contents would be neither hashed
// nor copied.
std::vector<std::string> untracked_files(git_repository* repo);

struct WorktreeSubmodule {
  std::string path;
  std::string commit;        // checked-out HEAD, or the index's gitlink when not initialised
  bool initialized = false;  // its repository exists in the work tree
  bool dirty = false;        // modified, staged or untracked content inside it
};
// Submodules present in the index, sorted by path.
std::vector<WorktreeSubmodule> worktree_submodules(git_repository* repo);

// Opens the repository of the submodule at `path` of `parent`; an unknown or uninitialised
// submodule is an error saying how to fix it.
Repository open_submodule(git_repository* parent, const std::string& path);

// Whether a file mode would be recorded by git as executable (git looks at the owner's bit).
bool git_executable(std::filesystem::perms p);

}  // namespace abh::git
