// retry_on_eintr and nothing_if_interrupted (system/eintr.hpp): an EINTR failure is repeated or
// read as "nothing yet"; every other result, and its errno, reach the caller unchanged.
#include <doctest/doctest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "system/eintr.hpp"

using namespace abh;

TEST_CASE("eintr: a call interrupted twice is made a third time, and its result returned") {
  int calls = 0;
  const long r = retry_on_eintr([&] {
    ++calls;
    if (calls < 3) {
      errno = EINTR;
      return -1L;
    }
    return 42L;
  });
  CHECK(r == 42);
  CHECK(calls == 3);
}

TEST_CASE("eintr: another failure is returned at once, with its errno") {
  int calls = 0;
  const int r = retry_on_eintr([&] {
    ++calls;
    errno = EAGAIN;
    return -1;
  });
  CHECK(r == -1);
  CHECK(errno == EAGAIN);
  CHECK(calls == 1);
  // A result of 0 (end of file, a timeout) is a result, whatever errno still holds.
  errno = EINTR;
  CHECK(retry_on_eintr([] { return 0; }) == 0);
}

TEST_CASE("eintr: in a loop with a deadline, EINTR reads as nothing having happened") {
  errno = EINTR;
  CHECK(nothing_if_interrupted(-1) == 0);
  errno = EBADF;
  CHECK(nothing_if_interrupted(-1) == -1);
  CHECK(errno == EBADF);
  errno = EINTR;
  CHECK(nothing_if_interrupted(3) == 3);
}

namespace {
std::atomic<int> g_signals{0};
void count_signal(int) {
  g_signals.fetch_add(1);
}
}  // namespace

TEST_CASE("eintr: a read that a real signal interrupts still returns the bytes written later") {
  // A handler without SA_RESTART: the kernel fails the blocked read with EINTR.
  struct sigaction sa {
  }, old{};
  sa.sa_handler = count_signal;
  sigemptyset(&sa.sa_mask);
  REQUIRE(::sigaction(SIGUSR1, &sa, &old) == 0);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::atomic<long> got{-2};
  char byte = 0;
  std::thread reader(
      [&] { got = retry_on_eintr([&] { return static_cast<long>(::read(fds[0], &byte, 1)); }); });
  // Signal the reader until a handler ran, then a few times more while it is blocked in read.
  for (int i = 0; g_signals.load() < 5 && i < 5000; ++i) {
    ::pthread_kill(reader.native_handle(), SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(got.load() == -2);  // still waiting: no signal ended the read
  REQUIRE(::write(fds[1], "x", 1) == 1);
  reader.join();
  CHECK(g_signals.load() >= 5);
  CHECK(got.load() == 1);
  CHECK(byte == 'x');
  ::close(fds[0]);
  ::close(fds[1]);
  ::sigaction(SIGUSR1, &old, nullptr);
}
