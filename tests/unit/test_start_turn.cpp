// The worker's side of the turn socket (worker/start_turn.hpp): a worker started ahead says it has
// loaded (worker_protocol::kLoaded), then waits for the orchestrator's word
// (worker_protocol::kTurn) and refuses anything else, a socket closed before it, and a stdin that
// is not a socket; after its result it may say it released the GPU (worker_protocol::kReleased);
// a worker not started ahead says and reads nothing.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "model/worker_protocol.hpp"
#include "start_turn.hpp"
#include "system/unique_fd.hpp"
#include "test_support.hpp"

using namespace abh;
using abh::worker::StartTurn;

namespace {

// Both ends of a turn socket: the worker's and the orchestrator's.
struct TurnSocket {
  UniqueFd worker, orchestrator;
  TurnSocket() {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    worker = UniqueFd(sv[0]);
    orchestrator = UniqueFd(sv[1]);
  }
  void say(std::string_view text) const {
    REQUIRE(::send(orchestrator.get(), text.data(), text.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(text.size()));
  }
  // What the worker has not read, without waiting for more.
  std::string unread() const {
    char buf[256];
    const ssize_t n = ::recv(worker.get(), buf, sizeof buf, MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
  // What the worker said that the orchestrator has not read, without waiting for more.
  std::string heard() const {
    char buf[256];
    const ssize_t n = ::recv(orchestrator.get(), buf, sizeof buf, MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }
  // Waits (up to a minute: this is not a timing check) until the worker has said `n` bytes.
  std::string hear(size_t n) const {
    std::string said;
    for (int i = 0; i < 6000 && said.size() < n; ++i) {
      said += heard();
      if (said.size() < n) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return said;
  }
};

}  // namespace

TEST_CASE("start turn: the orchestrator's word gives the turn, and nothing after it is read") {
  TurnSocket s;
  s.say(worker_protocol::kTurn);
  s.say("more");
  StartTurn turn(true, s.worker.get());
  CHECK(turn.ahead());
  const double waited = turn.wait();
  CHECK(waited >= 0);
  CHECK(turn.waited_s() == waited);
  CHECK(s.unread() == "more");
  CHECK(s.heard() == worker_protocol::kLoaded);
}

TEST_CASE("start turn: a worker started ahead says it has loaded before it waits for its turn") {
  TurnSocket s;
  StartTurn turn(true, s.worker.get());
  CHECK(s.heard().empty());  // nothing said before it waits
  std::string said;
  std::thread orchestrator([&] {
    // The turn is given only once the worker has said it loaded: a worker that waited first
    // would never be given it (the test's read gives up after a minute, and so the wait ends).
    said = s.hear(worker_protocol::kLoaded.size());
    s.say(worker_protocol::kTurn);
  });
  const double waited = turn.wait();
  orchestrator.join();
  CHECK(waited >= 0);
  CHECK(said == worker_protocol::kLoaded);
  CHECK(s.heard().empty());  // it said the word once, and nothing more
}

TEST_CASE("start turn: a worker waits until the word comes, in as many pieces as it takes") {
  TurnSocket s;
  StartTurn turn(true, s.worker.get());
  const std::string word(worker_protocol::kTurn);
  std::thread orchestrator([&] {
    s.say(word.substr(0, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    s.say(word.substr(1));
  });
  const double waited = turn.wait();
  orchestrator.join();
  CHECK(waited > 0);
}

TEST_CASE("start turn: after its turn a worker says it released the GPU, once") {
  TurnSocket s;
  s.say(worker_protocol::kTurn);
  StartTurn turn(true, s.worker.get());
  turn.wait();
  CHECK(s.heard() == worker_protocol::kLoaded);
  turn.say_released();
  CHECK(s.heard() == worker_protocol::kReleased);
  // An orchestrator that is gone hears nothing, and the worker goes on (no SIGPIPE).
  s.orchestrator.reset();
  turn.say_released();
}

TEST_CASE("start turn: a worker not started ahead says nothing when it released the GPU") {
  TurnSocket s;
  StartTurn turn(false, s.worker.get());
  turn.say_released();
  CHECK(s.heard().empty());
}

TEST_CASE("start turn: a socket closed before the turn means the sweep was stopped") {
  // Its kLoaded goes to a closed end: the send fails without a SIGPIPE, which would end this
  // process, and the wait says why.
  TurnSocket s;
  StartTurn turn(true, s.worker.get());
  s.orchestrator.reset();
  CHECK(test::error_of([&] { turn.wait(); }) ==
        "the orchestrator closed this worker's turn socket before its turn came: the sweep was "
        "stopped");
}

TEST_CASE("start turn: any other word is refused as a protocol mismatch") {
  for (const std::string& word :
       std::vector<std::string>{"stop\n", "go", "GO\n", std::string(100, 'g')}) {
    CAPTURE(word);
    TurnSocket s;
    s.say(word);
    if (word.back() != '\n') s.orchestrator.reset();  // a word that never ends, or a cut one
    StartTurn turn(true, s.worker.get());
    const std::string e = test::error_of([&] { turn.wait(); });
    CHECK(test::contains(e, "where this worker waited for"));
    CHECK(test::contains(e, "abharness and abharness-worker disagree on the protocol"));
  }
}

TEST_CASE("start turn: started ahead, its stdin must be the orchestrator's socket") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  UniqueFd read_end(p[0]), write_end(p[1]);
  const std::string want =
      "--ahead: stdin must be the socket abharness gives a worker it starts ahead, and it is "
      "not; run arms through `abharness run` or `abharness lane`";
  CHECK(test::usage_error_of([&] { StartTurn(true, read_end.get()); }) == want);
  const int closed = read_end.get();
  read_end.reset();
  CHECK(test::usage_error_of([&] { StartTurn(true, closed); }) == want);
}

TEST_CASE("start turn: a worker not started ahead has its turn at once and reads nothing") {
  TurnSocket s;
  s.say("stop\n");
  StartTurn turn(false, s.worker.get());
  CHECK_FALSE(turn.ahead());
  CHECK(turn.wait() == 0);
  CHECK(s.unread() == "stop\n");
  CHECK(s.heard().empty());
  // Its stdin may be anything (/dev/null when started by the sweep).
  CHECK_NOTHROW(StartTurn(false, -1));
}
