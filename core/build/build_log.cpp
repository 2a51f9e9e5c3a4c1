#include "build/build_log.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "system/eintr.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kNoSpace = "No space left on device";

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

// The mount point of the file system that holds `p`: the highest ancestor on the same device.
fs::path mount_point(fs::path p) {
  std::error_code ec;
  p = fs::absolute(p, ec);
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return p;
  const dev_t dev = st.st_dev;
  while (p.has_parent_path() && p.parent_path() != p) {
    struct stat up {};
    if (::stat(p.parent_path().c_str(), &up) != 0 || up.st_dev != dev) break;
    p = p.parent_path();
  }
  return p;
}

}  // namespace

BuildLog::BuildLog(UniqueFd file, fs::path path, std::size_t head_bytes, std::size_t tail_bytes)
    : file_(std::move(file)),
      path_(std::move(path)),
      head_bytes_(head_bytes),
      tail_bytes_(tail_bytes) {}

void BuildLog::write(std::string_view bytes) {
  if (!file_.valid() || write_errno_ != 0) return;
  while (!bytes.empty()) {
    const ssize_t n =
        retry_on_eintr([&] { return ::write(file_.get(), bytes.data(), bytes.size()); });
    if (n <= 0) {
      write_errno_ = n < 0 ? errno : ENOSPC;
      return;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void BuildLog::note(std::string_view text) {
  write(text);
}

void BuildLog::output(std::string_view chunk) {
  total_ += chunk.size();
  if (head_.size() < head_bytes_) {
    const std::size_t take = std::min(chunk.size(), head_bytes_ - head_.size());
    head_.append(chunk.substr(0, take));
    write(chunk.substr(0, take));
    chunk.remove_prefix(take);
  }
  tail_.append(chunk);
  // Held up to twice the tail, then cut to it: each byte is moved at most once on average.
  if (tail_.size() > 2 * tail_bytes_) tail_.erase(0, tail_.size() - tail_bytes_);
}

void BuildLog::finish(std::string_view footer) {
  std::string_view tail = tail_;
  if (tail.size() > tail_bytes_) tail.remove_prefix(tail.size() - tail_bytes_);
  const std::uintmax_t omitted = total_ - head_.size() - tail.size();
  if (omitted > 0) {
    // Cut at line boundaries where there are any, so neither side starts mid-line.
    const auto nl = tail.find('\n');
    if (nl != std::string_view::npos && nl + 1 < tail.size()) tail.remove_prefix(nl + 1);
    const std::uintmax_t left_out = total_ - head_.size() - tail.size();
    write((head_.empty() || head_.back() == '\n') ? "" : "\n");
    write("--- " + std::to_string(left_out) + " bytes of output left out here (" +
          human_bytes(static_cast<double>(total_)) + " in all; the log keeps the first " +
          human_bytes(static_cast<double>(head_bytes_)) + " and the last " +
          human_bytes(static_cast<double>(tail_bytes_)) + ") ---\n");
  }
  write(tail);
  const std::string_view last = !tail.empty() ? tail : std::string_view(head_);
  if (!last.empty() && last.back() != '\n') write("\n");
  write(footer);
  if (file_.valid() && write_errno_ == 0 && ::fsync(file_.get()) != 0) write_errno_ = errno;
  file_.reset();
}

std::string BuildLog::last_lines(std::size_t n) const {
  // The tail follows the head directly when nothing was left out; otherwise it alone is the end.
  std::string text = tail_.size() + head_.size() == total_ ? head_ + tail_ : tail_;
  std::vector<std::string_view> lines;
  std::string_view rest = text;
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  while (!rest.empty() && lines.size() < n) {
    const auto nl = rest.rfind('\n');
    lines.push_back(nl == std::string_view::npos ? rest : rest.substr(nl + 1));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(0, nl);
  }
  if (lines.empty()) return "  (the build printed nothing)\n";
  std::string out;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) out += "  " + printable(*it) + "\n";
  return out;
}

bool BuildLog::output_says_disk_full() const {
  return head_.find(kNoSpace) != std::string::npos || tail_.find(kNoSpace) != std::string::npos;
}

std::string disk_full_note(const BuildLog& log, const fs::path& dir) {
  const bool said =
      log.output_says_disk_full() || log.write_errno() == ENOSPC || log.write_errno() == EDQUOT;
  struct statvfs vfs {};
  const bool known = ::statvfs(dir.c_str(), &vfs) == 0;
  const double total = known ? double(vfs.f_blocks) * double(vfs.f_frsize) : 0;
  const double avail = known ? double(vfs.f_bavail) * double(vfs.f_frsize) : 0;
  // No word of it, and room left: not a full disk. (A linker that failed for lack of space often
  // deletes its half-written output, so free space alone cannot be trusted afterwards.)
  if (!said && !(known && avail < 1024.0 * 1024.0)) return "";
  std::string where = "the file system holding " + printable(dir.string());
  if (known)
    where += " (mounted at " + printable(mount_point(dir).string()) + ", " + human_bytes(total) +
             ", " + human_bytes(avail) + " free now)";
  std::string note = "the disk is full: " + where + " ran out of space during the build";
  if (log.write_errno() != 0)
    note += ", and the build log " + printable(log.path().string()) +
            " could not be written completely";
  return note + "; free space there or use a --runs-root on another file system";
}

}  // namespace abh
