// The turn of a worker started ahead (worker_protocol.hpp; docs/method.md, "Starting the next arm
// ahead"). Such a worker is started while the arm before it measures; it reads its plan, loads its
// plugin and initialises the GPU driver, then waits on its stdin, a socket from the orchestrator,
// for its turn: the word that the arm before it has ended. Only then does it create its CUDA
// context. A worker not started ahead has its turn from the start: wait() returns at once.
#pragma once

namespace abh::worker {

class StartTurn {
 public:
  // `turn_fd`: where the turn comes from, the worker's stdin (another descriptor in unit tests).
  explicit StartTurn(bool ahead, int turn_fd = 0);
  bool ahead() const { return ahead_; }
  // Says the worker has loaded its plan and plugin (worker_protocol::kLoaded), then blocks until
  // the turn comes; returns the seconds waited. Throws when the socket ends first (the orchestrator
  // stopped the sweep) or says anything else.
  double wait();
  double waited_s() const { return waited_s_; }
  // Says the device is free (worker_protocol::kReleased): the orchestrator may give the next arm
  // its turn before this process has ended. Nothing is said by a worker not started ahead.
  void say_released() const;

 private:
  bool ahead_;
  int turn_fd_;
  double waited_s_ = 0;
};

}  // namespace abh::worker
