#include "git/worktree.hpp"

#include <algorithm>
#include <cctype>
#include <exception>

#include "system/error.hpp"

namespace abh::git {

namespace {

bool safe_entry_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  if (name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos)
    return false;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower != ".git";
}

void walk(git_repository* repo, git_tree* tree, const std::string& prefix,
          const TreeVisitor& visit) {
  size_t n = git_tree_entrycount(tree);
  for (size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree, i);
    const char* name = git_tree_entry_name(e);
    if (!safe_entry_name(name))
      throw Error("tree entry '" + prefix + name + "' in " + describe(repo) +
                  " has a name that git itself refuses to check out; refusing to materialize it");
    std::string path = prefix + name;
    visit(path, e);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
      git_tree* raw = nullptr;
      check(git_tree_lookup(&raw, repo, git_tree_entry_id(e)),
            "cannot read directory '" + path + "' in " + describe(repo));
      Tree sub(raw);
      walk(repo, sub.get(), path + "/", visit);
    }
  }
}

}  // namespace

void walk_tree(git_repository* repo, git_tree* tree, const TreeVisitor& visit) {
  walk(repo, tree, "", visit);
}

std::vector<Gitlink> tree_gitlinks(git_repository* repo, git_tree* tree) {
  std::vector<Gitlink> out;
  walk_tree(repo, tree, [&](const std::string& path, const git_tree_entry* e) {
    if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT)
      out.push_back({path, oid_hex(git_tree_entry_id(e))});
  });
  std::sort(out.begin(), out.end(),
            [](const Gitlink& a, const Gitlink& b) { return a.path < b.path; });
  return out;
}

std::vector<std::string> untracked_files(git_repository* repo) {
  const std::filesystem::path wd = workdir(repo, "listing untracked files");
  git_status_options opts;
  check(git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION), "git_status_options_init");
  opts.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
  // Submodules have their own state (worktree_submodules); asking libgit2 to open each one here
  // would only slow this down.
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* raw = nullptr;
  check(git_status_list_new(&raw, repo, &opts),
        "cannot list the untracked files of " + describe(repo));
  StatusList list(raw);
  std::vector<std::string> out;
  size_t n = git_status_list_entrycount(list.get());
  for (size_t i = 0; i < n; ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    if (!(e->status & GIT_STATUS_WT_NEW) || !e->index_to_workdir) continue;
    std::string path = e->index_to_workdir->new_file.path;
    if (!path.empty() && path.back() == '/')
      throw Error("untracked directory '" + path + "' in " + wd.string() +
                  " is a git repository of its own, so its files can be neither identified nor "
                  "copied: add it as a submodule, list it in .gitignore, or move it away");
    out.push_back(std::move(path));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<WorktreeSubmodule> worktree_submodules(git_repository* repo) {
  struct Names {
    std::vector<std::string> names;
    std::exception_ptr error;
  } names;
  // libgit2 calls back through C frames: exceptions must not cross them.
  auto collect = [](git_submodule*, const char* name, void* payload) -> int {
    auto* n = static_cast<Names*>(payload);
    try {
      n->names.emplace_back(name);
      return 0;
    } catch (...) {
      n->error = std::current_exception();
      return -1;
    }
  };
  int rc = git_submodule_foreach(repo, collect, &names);
  if (names.error) std::rethrow_exception(names.error);
  check(rc, "cannot list the submodules of " + describe(repo) + " (check .gitmodules)");

  std::vector<WorktreeSubmodule> out;
  for (const auto& name : names.names) {
    git_submodule* raw = nullptr;
    check(git_submodule_lookup(&raw, repo, name.c_str()),
          "cannot read submodule '" + name + "' of " + describe(repo));
    Submodule sm(raw);
    unsigned status = 0;
    check(git_submodule_status(&status, repo, name.c_str(), GIT_SUBMODULE_IGNORE_NONE),
          "cannot read the state of submodule '" + name + "' of " + describe(repo));
    // Only gitlinks in the index are part of the working tree's sources; a submodule that only
    // .gitmodules or HEAD mentions is absent (its removal shows in the tracked diff).
    if (!(status & GIT_SUBMODULE_STATUS_IN_INDEX)) continue;
    WorktreeSubmodule s;
    s.path = git_submodule_path(sm.get());
    const git_oid* wd = git_submodule_wd_id(sm.get());
    const git_oid* index = git_submodule_index_id(sm.get());
    s.initialized = wd != nullptr;
    if (wd)
      s.commit = oid_hex(wd);
    else if (index)
      s.commit = oid_hex(index);
    else
      throw Error("submodule '" + s.path + "' of " + describe(repo) +
                  " has no commit in the index: run `git submodule update --init`");
    s.dirty =
        (status & (GIT_SUBMODULE_STATUS_WD_INDEX_MODIFIED | GIT_SUBMODULE_STATUS_WD_WD_MODIFIED |
                   GIT_SUBMODULE_STATUS_WD_UNTRACKED)) != 0;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

Repository open_submodule(git_repository* parent, const std::string& path) {
  git_submodule* raw = nullptr;
  int rc = git_submodule_lookup(&raw, parent, path.c_str());
  Submodule sm(raw);
  if (rc == GIT_ENOTFOUND)
    throw Error("submodule '" + path + "' of " + describe(parent) +
                " is not declared in its .gitmodules: check out a revision that declares it, or "
                "run `git submodule sync`");
  check(rc, "cannot read submodule '" + path + "' of " + describe(parent));
  git_repository* sub = nullptr;
  rc = git_submodule_open(&sub, sm.get());
  Repository repo(sub);
  if (rc < 0)
    throw Error("the repository of submodule '" + path + "' of " + describe(parent) +
                " is not available (" + last_error_message() +
                "): run `git submodule update --init --recursive` in " + describe(parent));
  return repo;
}

bool git_executable(std::filesystem::perms p) {
  return (p & std::filesystem::perms::owner_exec) != std::filesystem::perms::none;
}

}  // namespace abh::git
