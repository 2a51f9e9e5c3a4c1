#include "git/ignore.hpp"

#include "git/ignore_handle.hpp"
#include "git/repository.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace git {

bool visible_in(git_repository* repo, const fs::path& dir, fs::path* worktree) {
  const fs::path wd = fs::weakly_canonical(workdir(repo, "checking what git ignores"));
  const fs::path d = fs::weakly_canonical(dir);
  const fs::path rel = d.lexically_relative(wd);
  if (rel.empty() || *rel.begin() == "..") return false;
  if (worktree) *worktree = wd;
  if (rel == ".") return true;  // the work tree itself cannot be ignored
  int ignored = 0;
  check(git_ignore_path_is_ignored(&ignored, repo, (rel.generic_string() + "/").c_str()),
        "cannot check whether " + d.string() + " is ignored by git");
  return !ignored;
}

}  // namespace git

std::optional<fs::path> visible_to_git(const fs::path& repo, const fs::path& dir) {
  git::ensure_init();
  git::Repository r = git::open_repository(repo);
  if (git_repository_is_bare(r.get())) return std::nullopt;
  fs::path wd;
  if (!git::visible_in(r.get(), dir, &wd)) return std::nullopt;
  return wd;
}

}  // namespace abh
