// The seam between the order in which a lane runs its steps (sweep.cpp: which worker starts when,
// which one has its turn, what is recorded when one ends) and the processes that run them. The
// sweep asks a starter for each step's worker, tells the worker when its turn comes and waits for
// its end; it never starts a process itself. The real starter runs abharness-worker processes
// (arm_worker.hpp); the unit tests give fakes that record the order (tests/unit/fake_workers.hpp).
#pragma once

#include <memory>

#include "lane.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {

// How long a worker started ahead may take to load its plugin before a run's first turn, as the
// dry run allows its checks: a plugin slower than this to load would take hours to measure.
inline constexpr double kLoadLimitS = 900;

// One step's worker, started.
class ArmProcess {
 public:
  virtual ~ArmProcess() = default;
  // Waits until a worker started ahead has loaded its plan and plugin (worker_protocol::kLoaded);
  // false when it ended, or took kLoadLimitS, before saying so (finish() then says how it ended).
  // A worker not started ahead loads in its turn: true at once.
  virtual bool loaded() { return true; }
  // Its turn: the GPU is its own from now on, and its time limit starts.
  virtual void go() = 0;
  // After go(): waits until it has freed its device while its process may still be exiting
  // (worker_protocol::kReleased), and says whether it did. False, at once or when it ended or
  // passed its time limit without saying so: the next arm's turn then waits for finish().
  virtual bool released() { return false; }
  // Waits for it to end and says how it ended. Called once, after go().
  virtual ExitStatus finish() = 0;
};

class WorkerStarter {
 public:
  virtual ~WorkerStarter() = default;
  // Starts the worker of `step`, a step of `lane` in the run directory `run`, with fresh logs.
  // Lanes call it from their own threads at once.
  virtual std::unique_ptr<ArmProcess> start(const RunDirFs& run, const Lane& lane,
                                            const Step& step) const = 0;
};

}  // namespace abh
