// A build's log, written as the build prints. A recipe may print as much as it likes: the log
// keeps the first `head_bytes` of its output as they arrive and the last `tail_bytes` (held in
// memory, written when the build ends), with a line between them saying how much was left out.
// So the log, the orchestrator's memory and the cache's copy of the log stay bounded, and a build
// that succeeded never fails for being verbose (a 300 MB build once did, leaving a 288 MB scratch
// file). A write that fails — most often because the build filled the disk the log is on — does
// not stop the build or lose its output: the tail is still in memory for the error message, and
// the failure is recorded so the message can say that the disk is full, and where.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "system/unique_fd.hpp"

namespace abh {

class BuildLog {
 public:
  static constexpr std::size_t kDefaultHead = 2u << 20;
  static constexpr std::size_t kDefaultTail = 2u << 20;

  BuildLog(UniqueFd file, std::filesystem::path path, std::size_t head_bytes = kDefaultHead,
           std::size_t tail_bytes = kDefaultTail);

  // Text of abharness's own (the header saying what runs, the closing line), written as is.
  void note(std::string_view text);
  // A chunk of the build's output (stdout and stderr, interleaved as printed).
  void output(std::string_view chunk);
  // Writes what was left out and the tail, then `footer`, and syncs the file.
  void finish(std::string_view footer);

  // The last `n` lines of the build's output as it printed them, each indented by two spaces.
  std::string last_lines(std::size_t n) const;
  std::uintmax_t output_bytes() const { return total_; }
  // Whether the output says that a device was out of space (the linker's "No space left on
  // device" when the disk is full).
  bool output_says_disk_full() const;
  // The error of the first write to the log that failed, or 0.
  int write_errno() const { return write_errno_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  void write(std::string_view bytes);

  UniqueFd file_;
  std::filesystem::path path_;
  std::size_t head_bytes_, tail_bytes_;
  std::string head_;  // the first head_bytes_ of output (also written)
  std::string tail_;  // the output after the head: its last tail_bytes_ (up to twice that held)
  std::uintmax_t total_ = 0;
  int write_errno_ = 0;
};

// When a failed build ran out of disk space: "the file system holding <dir> (mounted at <mount>,
// 2.0 MiB, 0 B free now) is full: ..." naming the fix; empty when nothing says so. `log` supplies
// the evidence (the build's own words, or a failed write of the log).
std::string disk_full_note(const BuildLog& log, const std::filesystem::path& dir);

}  // namespace abh
