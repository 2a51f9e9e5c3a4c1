#include "git/materialize.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <system_error>

#include "git/ignore_handle.hpp"
#include "git/source_identity.hpp"
#include "git/worktree.hpp"
#include "system/eintr.hpp"
#include "system/error.hpp"

namespace abh {

namespace fs = std::filesystem;

namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string errno_text() {
  return std::strerror(errno);
}

// O_EXCL | O_NOFOLLOW: a crafted tree or a racing process cannot make us write through a symlink
// or over a file already written.
void write_file(const fs::path& p, std::string_view bytes, bool executable) {
  FileDescriptor fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           executable ? 0755 : 0644));
  if (fd.get() < 0) throw Error("cannot create " + p.string() + ": " + errno_text());
  while (!bytes.empty()) {
    const ssize_t n = retry_on_eintr([&] { return ::write(fd.get(), bytes.data(), bytes.size()); });
    if (n < 0) throw Error("cannot write " + p.string() + ": " + errno_text());
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  if (::close(fd.release()) != 0) throw Error("cannot write " + p.string() + ": " + errno_text());
}

void make_dir(const fs::path& p) {
  if (!fs::create_directory(p))
    throw Error(p.string() + " already exists while materializing (a duplicate tree entry?)");
}

std::string blob_bytes(git_repository* repo, const git_oid* id, const std::string& path) {
  git_blob* raw = nullptr;
  git::check(git_blob_lookup(&raw, repo, id),
             "cannot read the content of '" + path + "' in " + git::describe(repo));
  git::Blob blob(raw);
  return std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                     static_cast<size_t>(git_blob_rawsize(blob.get())));
}

// Writes the commit's tree blob by blob rather than through git_checkout_tree: nothing here can
// touch the user's index, and no checkout filter or baseline logic is involved.
void export_commit(git_repository* repo, const std::string& commit_hex, const fs::path& dest) {
  git::Commit commit = git::lookup_commit(repo, commit_hex, "materializing " + commit_hex);
  git_tree* raw = nullptr;
  git::check(git_commit_tree(&raw, commit.get()),
             "cannot read the tree of commit " + commit_hex + " in " + git::describe(repo));
  git::Tree tree(raw);
  git::walk_tree(repo, tree.get(), [&](const std::string& path, const git_tree_entry* e) {
    const fs::path out = dest / path;
    switch (git_tree_entry_filemode(e)) {
      case GIT_FILEMODE_TREE:
        make_dir(out);
        break;
      case GIT_FILEMODE_BLOB:
        write_file(out, blob_bytes(repo, git_tree_entry_id(e), path), false);
        break;
      case GIT_FILEMODE_BLOB_EXECUTABLE:
        write_file(out, blob_bytes(repo, git_tree_entry_id(e), path), true);
        break;
      case GIT_FILEMODE_LINK:
        fs::create_symlink(blob_bytes(repo, git_tree_entry_id(e), path), out);
        break;
      case GIT_FILEMODE_COMMIT: {
        make_dir(out);
        const std::string sub_commit = git::oid_hex(git_tree_entry_id(e));
        git::Repository sub = git::open_submodule(repo, path);
        try {
          export_commit(sub.get(), sub_commit, out);
        } catch (...) {
          rethrow_with_context("submodule '" + path + "' at " + sub_commit);
        }
        break;
      }
      default:
        throw Error("tree entry '" + path + "' in " + git::describe(repo) +
                    " has an unsupported file mode " +
                    std::to_string(static_cast<unsigned>(git_tree_entry_filemode(e))));
    }
  });
}

// Copies a file of the work tree as it is on disk. Returns false when there is nothing to copy:
// a tracked file deleted in the work tree (the diff records the deletion) or replaced by a
// directory (whose files are untracked and copied as such).
bool copy_from_disk(const fs::path& src, const fs::path& dst) {
  struct stat st {};
  if (::lstat(src.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return false;
    throw Error("cannot read " + src.string() + ": " + errno_text());
  }
  if (S_ISDIR(st.st_mode)) return false;
  fs::create_directories(dst.parent_path());
  if (S_ISLNK(st.st_mode)) {
    fs::create_symlink(fs::read_symlink(src), dst);
    return true;
  }
  if (!S_ISREG(st.st_mode))
    throw Error(src.string() + " is neither a regular file nor a symlink: cannot materialize it");
  fs::copy_file(src, dst, fs::copy_options::none);
  using fs::perms;
  perms p = perms::owner_read | perms::owner_write | perms::group_read | perms::others_read;
  if (st.st_mode & S_IXUSR) p |= perms::owner_exec | perms::group_exec | perms::others_exec;
  fs::permissions(dst, p, fs::perm_options::replace);
  return true;
}

// The same file set that the WORKTREE identity hashes: tracked files as on disk (index entries),
// untracked non-ignored files, and each submodule's work tree, recursively.
void copy_worktree(git_repository* repo, const fs::path& dest) {
  const fs::path wd = git::workdir(repo, "materializing WORKTREE");
  git_index* raw = nullptr;
  git::check(git_repository_index(&raw, repo), "cannot read the index of " + wd.string());
  git::Index index(raw);
  git::check(git_index_read(index.get(), 0), "cannot read the index of " + wd.string());
  std::set<std::string> seen;
  const size_t n = git_index_entrycount(index.get());
  for (size_t i = 0; i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(index.get(), i);
    if (!seen.insert(e->path).second) continue;    // conflict stages of one path
    if (e->mode == GIT_FILEMODE_COMMIT) continue;  // submodules: below
    const fs::path out = dest / e->path;
    if (e->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) {
      // Sparse checkout: absent on disk, unchanged for git, so the index's content is the truth.
      fs::create_directories(out.parent_path());
      if (e->mode == GIT_FILEMODE_LINK)
        fs::create_symlink(blob_bytes(repo, &e->id, e->path), out);
      else
        write_file(out, blob_bytes(repo, &e->id, e->path), e->mode == GIT_FILEMODE_BLOB_EXECUTABLE);
      continue;
    }
    copy_from_disk(wd / e->path, out);
  }
  for (const auto& rel : git::untracked_files(repo))
    if (!copy_from_disk(wd / rel, dest / rel))
      throw Error("untracked file " + (wd / rel).string() + " vanished while it was being copied");
  for (const auto& s : git::worktree_submodules(repo)) {
    if (!s.initialized)
      throw Error("submodule '" + s.path + "' of " + wd.string() +
                  " is not initialised, so its files are not in the working tree: run `git "
                  "submodule update --init --recursive`");
    git::Repository sub = git::open_submodule(repo, s.path);
    fs::create_directories(dest / s.path);
    try {
      copy_worktree(sub.get(), dest / s.path);
    } catch (...) {
      rethrow_with_context("submodule '" + s.path + "'");
    }
  }
}

// Materializing into the work tree itself would add untracked files and so change the very
// identity being materialized; say so up front instead of failing the final check.
void refuse_dest_inside_worktree(git_repository* repo, const fs::path& dest) {
  fs::path wd;
  if (git::visible_in(repo, dest, &wd))
    throw Error("destination " + fs::weakly_canonical(dest).string() +
                " is inside the working tree of " + wd.string() +
                " and not ignored by git, so copying WORKTREE there would change WORKTREE: add "
                "its directory to .gitignore or use a run directory outside the repository");
}

bool prepare_dest(const fs::path& dest) {
  std::error_code ec;
  auto st = fs::symlink_status(dest, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      throw Error("destination " + dest.string() + " exists and is not a directory");
    if (!fs::is_empty(dest))
      throw Error("destination " + dest.string() +
                  " is not empty: materializing needs a new or empty directory");
    return false;
  }
  fs::create_directories(dest);
  return true;
}

void clean_dest(const fs::path& dest, bool created) {
  std::error_code ec;
  if (created) {
    fs::remove_all(dest, ec);
    return;
  }
  for (const auto& entry : fs::directory_iterator(dest, ec)) fs::remove_all(entry.path(), ec);
}

}  // namespace

void materialize(const fs::path& repo_path, const SourceIdentity& id, const fs::path& dest) {
  const std::string what = "materializing '" + id.requested + "' (" + id.kind + " " + id.commit +
                           ") of " + repo_path.string() + " into " + dest.string();
  git::Repository repo;
  bool created = false;
  try {
    repo = git::open_repository(repo_path);
    if (id.kind == "worktree") refuse_dest_inside_worktree(repo.get(), dest);
    created = prepare_dest(dest);
  } catch (...) {
    rethrow_with_context(what);
  }
  try {
    std::string rev;
    if (id.kind == "commit") {
      export_commit(repo.get(), id.commit, dest);
      rev = id.commit;
    } else if (id.kind == "worktree") {
      copy_worktree(repo.get(), dest);
      rev = kWorktree;
    } else {
      throw Error("unknown identity kind '" + id.kind + "'");
    }
    // The copy is only what was identified if the sources still have that identity now that it
    // is done (a file edited meanwhile would otherwise build something unrecorded).
    const SourceIdentity now = git::source_identity(repo.get(), rev);
    if (now.digest != id.digest)
      throw Error(id.kind == "worktree"
                      ? "the working tree changed since its identity was computed (identity " +
                            now.digest + " now, " + id.digest +
                            " recorded): finish editing, then start the run again"
                      : "the identity recorded for commit " + id.commit +
                            " does not match the repository's (digest " + now.digest +
                            " computed, " + id.digest + " recorded)");
  } catch (...) {
    clean_dest(dest, created);
    rethrow_with_context(what);
  }
}

}  // namespace abh
