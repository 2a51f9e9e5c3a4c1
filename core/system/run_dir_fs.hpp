// The files of a run directory, reached without following symbolic links.
//
// A run directory is evidence: its plan and results are checked, its logs quoted, its plugins
// loaded. A symbolic link inside it (a result, results/ itself, a shape's directory, a log, .lock)
// would let a read come from, or a write land in, a file outside it, so every path below the root
// is opened one component at a time from a descriptor of the root, with O_NOFOLLOW: a link
// anywhere inside is refused, and the refusal names it. The root itself is the user's to name and
// may be reached through links. Writes never go through what is already at a name: atomic writes
// rename a new file over it, output files are created afresh (O_EXCL) after the old name is
// removed, so a planted link or hard link is replaced, never written through. Reads take regular
// files only (a FIFO would block, a device would never end).
//
// Paths are relative to the root ("results/m32/A1.json") and may not contain "." or "..". Every
// refusal is a UsageError naming the path: the run directory is the user's to repair.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "system/json_io.hpp"
#include "system/mapped_file.hpp"
#include "system/unique_fd.hpp"

namespace abh {

class RunDirFs {
 public:
  // Opens `root`, an existing directory (UsageError naming it otherwise).
  explicit RunDirFs(const std::filesystem::path& root);
  const std::filesystem::path& root() const { return root_; }
  // root / rel, for messages and for programs that need a path (the worker's --run-dir).
  std::filesystem::path path(const std::filesystem::path& rel) const { return root_ / rel; }

  enum class Kind { absent, file, directory, symlink, other };
  struct Entry {
    std::string name;
    Kind kind;
    std::string what;  // "a regular file", "a directory", "a FIFO", "a device", ...
  };
  struct FileInfo {
    std::uintmax_t size = 0;
    std::int64_t mtime_ns = 0;
  };

  // What is at `rel`, not following a link there; absent when it or a parent does not exist.
  Kind kind(const std::filesystem::path& rel) const;
  // The entries of the directory at `rel` ("" is the root), sorted by name; none when absent.
  std::vector<Entry> list(const std::filesystem::path& rel) const;

  // The regular file at `rel`, opened for reading.
  UniqueFd open_read(const std::filesystem::path& rel) const;
  // Its content, refused beyond `max_bytes`; `info` receives its size and mtime as read.
  std::string read(const std::filesystem::path& rel, std::uintmax_t max_bytes,
                   FileInfo* info = nullptr) const;
  json read_json(const std::filesystem::path& rel, const JsonLimits& lim = {}) const;
  // The regular file at `rel` mapped read-only, refused beyond `max_bytes`: for a large file that
  // is scanned rather than copied (system/mapped_file.hpp).
  MappedFile map(const std::filesystem::path& rel, std::uintmax_t max_bytes) const;
  std::string sha256(const std::filesystem::path& rel) const;

  // Creates the directories of `rel` that are missing ("" does nothing).
  void make_dirs(const std::filesystem::path& rel) const;
  // Writes `content` to `rel` atomically: a hidden temp file beside it (created with O_EXCL),
  // fsync, rename over the name, fsync of the directory. Creates missing parent directories.
  void write_atomic(const std::filesystem::path& rel, std::string_view content) const;
  void write_json_atomic(const std::filesystem::path& rel, const json& j) const;
  // Copies the regular file `source` (outside the run directory) to `rel` the same atomic way.
  void copy_in(const std::filesystem::path& source, const std::filesystem::path& rel) const;
  // A new, empty regular file at `rel`, opened for writing; whatever had the name is removed
  // first (a file or link, never a directory). Creates missing parent directories.
  UniqueFd create(const std::filesystem::path& rel) const;
  // The regular file at `rel`, created when absent, opened for reading and writing in place: for
  // a lock file, whose inode must be the same for every process. Refused when it has another
  // link (a hard link would make the file outside the run directory the one written).
  UniqueFd open_in_place(const std::filesystem::path& rel) const;
  // Moves the regular file at `from` to `to` (renamed, never copied), creating the missing parent
  // directories of `to`; a link or anything else at `from` is refused by name.
  void move(const std::filesystem::path& from, const std::filesystem::path& to) const;
  // Removes the file or link at `rel`; false when there was none.
  bool remove(const std::filesystem::path& rel) const;

 private:
  // The size and mtime of the open file `fd` at `rel`, refused beyond `max_bytes`.
  FileInfo checked_size(const UniqueFd& fd, const std::filesystem::path& rel,
                        std::uintmax_t max_bytes) const;
  UniqueFd open_dir(const std::filesystem::path& rel, bool create) const;
  // The atomic write: `fill` writes the content to the temp file's descriptor.
  void write_atomic_with(
      const std::filesystem::path& rel,
      const std::function<void(int fd, const std::filesystem::path&)>& fill) const;
  // The directory that holds `rel` and the last component's name.
  std::pair<UniqueFd, std::string> parent_of(const std::filesystem::path& rel, bool create) const;

  std::filesystem::path root_;
  UniqueFd fd_;
};

}  // namespace abh
