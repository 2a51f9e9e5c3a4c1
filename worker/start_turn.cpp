#include "start_turn.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "model/worker_protocol.hpp"
#include "system/eintr.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh::worker {
namespace {

// What the orchestrator wrote, up to and with the first newline; empty at end of file.
std::string read_line(int fd) {
  std::string line;
  for (;;) {
    char c = 0;
    const ssize_t n = retry_on_eintr([&] { return ::read(fd, &c, 1); });
    if (n < 0) throw Error(std::string("reading the turn socket (stdin): ") + std::strerror(errno));
    if (n == 0) return line;
    line += c;
    if (c == '\n') return line;
    if (line.size() > 64) return line;
  }
}

}  // namespace

StartTurn::StartTurn(bool ahead, int turn_fd) : ahead_(ahead), turn_fd_(turn_fd) {
  if (!ahead_) return;
  struct stat st {};
  if (::fstat(turn_fd_, &st) != 0 || !S_ISSOCK(st.st_mode))
    throw UsageError(std::string(worker_protocol::kAheadFlag) +
                     ": stdin must be the socket abharness gives a worker it starts ahead, and it "
                     "is not; run arms through `abharness run` or `abharness lane`");
}

double StartTurn::wait() {
  if (!ahead_) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  // An orchestrator that stopped has closed its end: the send fails (EPIPE, no SIGPIPE) and the
  // read below says the sweep was stopped.
  const std::string_view loaded = worker_protocol::kLoaded;
  (void)::send(turn_fd_, loaded.data(), loaded.size(), MSG_NOSIGNAL);
  const std::string line = read_line(turn_fd_);
  if (line.empty())
    throw Error(
        "the orchestrator closed this worker's turn socket before its turn came: the sweep "
        "was stopped");
  if (line != worker_protocol::kTurn)
    throw Error("the turn socket said " + quote(line) + " where this worker waited for " +
                quote(std::string(worker_protocol::kTurn)) +
                ": abharness and abharness-worker disagree on the protocol (different builds?)");
  waited_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return waited_s_;
}

void StartTurn::say_released() const {
  if (!ahead_) return;
  // An orchestrator that stopped has closed its end: EPIPE, no SIGPIPE, and nothing to tell.
  const std::string_view released = worker_protocol::kReleased;
  (void)::send(turn_fd_, released.data(), released.size(), MSG_NOSIGNAL);
}

}  // namespace abh::worker
