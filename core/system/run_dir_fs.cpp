#include "system/run_dir_fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "system/eintr.hpp"
#include "system/error.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

RunDirFs::Kind kind_of(mode_t m) {
  if (S_ISREG(m)) return RunDirFs::Kind::file;
  if (S_ISDIR(m)) return RunDirFs::Kind::directory;
  if (S_ISLNK(m)) return RunDirFs::Kind::symlink;
  return RunDirFs::Kind::other;
}

const char* kind_name(mode_t m) {
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "a regular file";
}

std::string shown(const fs::path& p) {
  return printable(p.string());
}

// "results/m32 is a symbolic link: ..." when `name` in `dirfd` is not what was wanted; the errno
// text otherwise.
[[noreturn]] void refuse(int dirfd, const std::string& name, const fs::path& full, int err,
                         const char* wanted) {
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    throw UsageError(shown(full) +
                     " is a symbolic link: abharness does not follow links inside a run "
                     "directory (a read could come from, or a write land in, a file outside it); "
                     "put the " +
                     wanted + " itself there");
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      (err == ENOTDIR || err == EISDIR || err == ENXIO || err == 0))
    throw UsageError(shown(full) + " is " + kind_name(st.st_mode) + ", not a " + wanted);
  if (err == EACCES || err == EROFS)
    throw Error("cannot open " + shown(full) + ": " + std::strerror(err) +
                ": resuming, locking or reporting into a run writes in its directory; copy the "
                "run somewhere this user can write (cp -a) and use the copy, or only read it "
                "(verify, report --print, report --out DIR)");
  throw Error("cannot open " + shown(full) + ": " + std::strerror(err));
}

void check_relative(const fs::path& rel) {
  if (rel.is_absolute()) throw Error("internal: run-directory path " + shown(rel) + " is absolute");
  for (const auto& part : rel)
    if (part == "." || part == ".." || part.empty())
      throw Error("internal: run-directory path " + shown(rel) + " has a '.' or '..' part");
}

UniqueFd dup_fd(int fd) {
  UniqueFd d(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
  if (!d.valid())
    throw Error(std::string("cannot duplicate a descriptor: ") + std::strerror(errno));
  return d;
}

void write_all(int fd, std::string_view content, const fs::path& full) {
  size_t off = 0;
  while (off < content.size()) {
    const ssize_t n =
        retry_on_eintr([&] { return ::write(fd, content.data() + off, content.size() - off); });
    if (n < 0) throw Error("cannot write " + shown(full) + ": " + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
}

}  // namespace

RunDirFs::RunDirFs(const fs::path& root) : root_(root) {
  fd_ = UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd_.valid())
    throw UsageError("cannot open the run directory " + shown(root) + ": " + std::strerror(errno));
}

UniqueFd RunDirFs::open_dir(const fs::path& rel, bool create) const {
  check_relative(rel);
  UniqueFd cur = dup_fd(fd_.get());
  fs::path walked;
  for (const auto& part : rel) {
    const std::string name = part.string();
    walked /= part;
    int fd = ::openat(cur.get(), name.c_str(), kDirFlags);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(cur.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
        throw Error("cannot create " + shown(path(walked)) + ": " + std::strerror(errno));
      fd = ::openat(cur.get(), name.c_str(), kDirFlags);
    }
    if (fd < 0) {
      if (errno == ENOENT) return UniqueFd();
      refuse(cur.get(), name, path(walked), errno, "directory");
    }
    cur = UniqueFd(fd);
  }
  return cur;
}

std::pair<UniqueFd, std::string> RunDirFs::parent_of(const fs::path& rel, bool create) const {
  check_relative(rel);
  if (!rel.has_filename())
    throw Error("internal: run-directory path " + shown(rel) + " has no name");
  return {open_dir(rel.parent_path(), create), rel.filename().string()};
}

RunDirFs::Kind RunDirFs::kind(const fs::path& rel) const {
  if (rel.empty()) return Kind::directory;
  auto [dir, name] = parent_of(rel, false);
  if (!dir.valid()) return Kind::absent;
  struct stat st {};
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Kind::absent;
    throw Error("cannot stat " + shown(path(rel)) + ": " + std::strerror(errno));
  }
  return kind_of(st.st_mode);
}

std::vector<RunDirFs::Entry> RunDirFs::list(const fs::path& rel) const {
  std::vector<Entry> out;
  UniqueFd dir = open_dir(rel, false);
  if (!dir.valid()) return out;
  const int listed = dup_fd(dir.get()).release();
  DIR* d = ::fdopendir(listed);
  if (!d) {
    ::close(listed);
    throw Error("cannot list " + shown(path(rel)) + ": " + std::strerror(errno));
  }
  for (errno = 0; dirent* e = ::readdir(d); errno = 0) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    out.push_back({name, kind_of(st.st_mode), kind_name(st.st_mode)});
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) throw Error("cannot list " + shown(path(rel)) + ": " + std::strerror(err));
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

UniqueFd RunDirFs::open_read(const fs::path& rel) const {
  auto [dir, name] = parent_of(rel, false);
  if (!dir.valid()) throw Error("cannot read " + shown(path(rel)) + ": " + std::strerror(ENOENT));
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer before it can be refused.
  UniqueFd fd(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT)
      throw Error("cannot read " + shown(path(rel)) + ": " + std::strerror(ENOENT));
    refuse(dir.get(), name, path(rel), errno, "regular file");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw Error("cannot stat " + shown(path(rel)) + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) refuse(dir.get(), name, path(rel), 0, "regular file");
  return fd;
}

RunDirFs::FileInfo RunDirFs::checked_size(const UniqueFd& fd, const fs::path& rel,
                                          std::uintmax_t max_bytes) const {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw Error("cannot stat " + shown(path(rel)) + ": " + std::strerror(errno));
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size > max_bytes)
    throw Error(shown(path(rel)) + ": " + std::to_string(size) +
                " bytes is more than the limit of " + std::to_string(max_bytes));
  return {size, static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

std::string RunDirFs::read(const fs::path& rel, std::uintmax_t max_bytes, FileInfo* info) const {
  UniqueFd fd = open_read(rel);
  const FileInfo checked = checked_size(fd, rel, max_bytes);
  const std::uintmax_t size = checked.size;
  if (info) *info = checked;
  std::string out;
  out.reserve(size);
  std::array<char, 1 << 16> buf{};
  for (;;) {
    const ssize_t n = retry_on_eintr([&] { return ::read(fd.get(), buf.data(), buf.size()); });
    if (n < 0) throw Error("cannot read " + shown(path(rel)) + ": " + std::strerror(errno));
    if (n == 0) break;
    out.append(buf.data(), static_cast<size_t>(n));
    if (out.size() > max_bytes)  // it grew while being read
      throw Error(shown(path(rel)) + ": more than the limit of " + std::to_string(max_bytes) +
                  " bytes");
  }
  return out;
}

MappedFile RunDirFs::map(const fs::path& rel, std::uintmax_t max_bytes) const {
  UniqueFd fd = open_read(rel);
  const FileInfo checked = checked_size(fd, rel, max_bytes);
  return MappedFile(fd, static_cast<std::size_t>(checked.size), shown(path(rel)));
}

json RunDirFs::read_json(const fs::path& rel, const JsonLimits& lim) const {
  return parse_json(read(rel, lim.max_bytes), printable(path(rel).string()), lim);
}

std::string RunDirFs::sha256(const fs::path& rel) const {
  UniqueFd fd = open_read(rel);
  Sha256 h;
  std::array<char, 1 << 16> buf{};
  for (;;) {
    const ssize_t n = retry_on_eintr([&] { return ::read(fd.get(), buf.data(), buf.size()); });
    if (n < 0)
      throw Error("cannot read " + shown(path(rel)) + " to hash it: " + std::strerror(errno));
    if (n == 0) break;
    h.update(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  return h.hex();
}

void RunDirFs::make_dirs(const fs::path& rel) const {
  open_dir(rel, true);
}

void RunDirFs::write_atomic_with(const fs::path& rel,
                                 const std::function<void(int, const fs::path&)>& fill) const {
  auto [dir, name] = parent_of(rel, true);
  const std::string tmp = "." + name + ".tmp." + std::to_string(::getpid());
  const fs::path full = path(rel.parent_path() / tmp);
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::openat(dir.get(), tmp.c_str(), flags, 0644));
  if (!fd.valid() && errno == EEXIST) {
    // Left by an earlier process with our pid (a crash); it is ours to replace, not to write into.
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    fd = UniqueFd(::openat(dir.get(), tmp.c_str(), flags, 0644));
  }
  if (!fd.valid()) throw Error("cannot create " + shown(full) + ": " + std::strerror(errno));
  try {
    fill(fd.get(), full);
    if (::fsync(fd.get()) != 0)
      throw Error("cannot fsync " + shown(full) + ": " + std::strerror(errno));
    fd.reset();
    if (::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0)
      throw Error("cannot rename " + shown(full) + " to " + shown(path(rel)) + ": " +
                  std::strerror(errno));
  } catch (...) {
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    throw;
  }
  ::fsync(dir.get());
}

void RunDirFs::write_atomic(const fs::path& rel, std::string_view content) const {
  write_atomic_with(rel, [&](int fd, const fs::path& full) { write_all(fd, content, full); });
}

void RunDirFs::copy_in(const fs::path& source, const fs::path& rel) const {
  UniqueFd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) throw Error("cannot read " + shown(source) + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error("cannot copy " + shown(source) + ": not a regular file");
  write_atomic_with(rel, [&](int fd, const fs::path& full) {
    std::array<char, 1 << 16> buf{};
    for (;;) {
      const ssize_t n = retry_on_eintr([&] { return ::read(in.get(), buf.data(), buf.size()); });
      if (n < 0) throw Error("cannot read " + shown(source) + ": " + std::strerror(errno));
      if (n == 0) break;
      write_all(fd, std::string_view(buf.data(), static_cast<size_t>(n)), full);
    }
  });
}

void RunDirFs::write_json_atomic(const fs::path& rel, const json& j) const {
  write_atomic(rel, j.dump(2) + "\n");
}

UniqueFd RunDirFs::create(const fs::path& rel) const {
  auto [dir, name] = parent_of(rel, true);
  if (::unlinkat(dir.get(), name.c_str(), 0) != 0 && errno != ENOENT)
    refuse(dir.get(), name, path(rel), errno, "regular file");
  UniqueFd fd(::openat(dir.get(), name.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) throw Error("cannot create " + shown(path(rel)) + ": " + std::strerror(errno));
  return fd;
}

UniqueFd RunDirFs::open_in_place(const fs::path& rel) const {
  auto [dir, name] = parent_of(rel, true);
  UniqueFd fd(::openat(dir.get(), name.c_str(),
                       O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
  if (!fd.valid()) refuse(dir.get(), name, path(rel), errno, "regular file");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw Error("cannot stat " + shown(path(rel)) + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) refuse(dir.get(), name, path(rel), 0, "regular file");
  if (st.st_nlink != 1)
    throw UsageError(shown(path(rel)) + " has " + std::to_string(st.st_nlink) +
                     " hard links: it would be written for every one of them; remove it (abharness "
                     "creates it again)");
  return fd;
}

void RunDirFs::move(const fs::path& from, const fs::path& to) const {
  auto [src, src_name] = parent_of(from, false);
  if (!src.valid()) throw Error("cannot move " + shown(path(from)) + ": " + std::strerror(ENOENT));
  if (kind(from) != Kind::file) refuse(src.get(), src_name, path(from), 0, "regular file");
  auto [dst, dst_name] = parent_of(to, true);
  if (::renameat(src.get(), src_name.c_str(), dst.get(), dst_name.c_str()) != 0)
    throw Error("cannot move " + shown(path(from)) + " to " + shown(path(to)) + ": " +
                std::strerror(errno));
}

bool RunDirFs::remove(const fs::path& rel) const {
  auto [dir, name] = parent_of(rel, false);
  if (!dir.valid()) return false;
  if (::unlinkat(dir.get(), name.c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  throw Error("cannot remove " + shown(path(rel)) + ": " + std::strerror(errno));
}

}  // namespace abh
