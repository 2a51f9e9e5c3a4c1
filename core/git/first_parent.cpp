#include "git/first_parent.hpp"

#include <algorithm>

#include "git/repository.hpp"
#include "system/error.hpp"

namespace abh::git {

namespace {

bisect::BisectCommit commit_entry(const git_commit* c) {
  const char* summary = git_commit_summary(const_cast<git_commit*>(c));
  return {oid_hex(git_commit_id(c)), summary ? summary : ""};
}

}  // namespace

std::vector<bisect::BisectCommit> first_parent_path(const std::filesystem::path& repo_path,
                                                    const std::string& good,
                                                    const std::string& bad) {
  ensure_init();
  Repository repo = open_repository(repo_path);
  const Commit good_c = resolve_commit(repo.get(), good);
  Commit at = resolve_commit(repo.get(), bad);
  const git_oid* good_id = git_commit_id(good_c.get());
  if (git_oid_equal(good_id, git_commit_id(at.get())))
    throw UsageError("--good " + good + " and --bad " + bad +
                     " are the same commit: give a good commit older than the bad one");
  std::vector<bisect::BisectCommit> path;
  while (!git_oid_equal(good_id, git_commit_id(at.get()))) {
    path.push_back(commit_entry(at.get()));
    if (git_commit_parentcount(at.get()) == 0)
      throw UsageError("--good " + good + " (" + oid_hex(good_id).substr(0, 12) +
                       ") is not on the first-parent history of --bad " + bad +
                       ": give a good commit that `git log --first-parent " + bad + "` lists");
    git_commit* parent = nullptr;
    check(git_commit_parent(&parent, at.get(), 0),
          "cannot read the first parent of " + path.back().sha + " in " + describe(repo.get()));
    at.reset(parent);
  }
  path.push_back(commit_entry(good_c.get()));
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace abh::git
