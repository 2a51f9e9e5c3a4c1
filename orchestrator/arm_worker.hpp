// One arm's worker process as a lane drives it (sweep.hpp): its logs, command line and
// environment, and, when the plan starts workers ahead (schedule.start_ahead), its turn socket.
// Such a worker is started while the arm before it measures; it reads its plan, loads its plugin
// and initialises the GPU driver, and creates its CUDA context only when go() tells it that the
// arm before has ended (docs/method.md, "Starting the next arm ahead"; the message is in
// worker_protocol.hpp). Its time limit (the plan's arm_timeout_s) counts from its turn, not from
// its start. WorkerProcesses is the sweep's real starter (worker_starter.hpp): one ArmWorker per
// step.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "lane.hpp"
#include "model/plan.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"
#include "system/unique_fd.hpp"
#include "worker_starter.hpp"

namespace abh {

class ArmWorker : public ArmProcess {
 public:
  // Starts the worker of `t` (of its unrecorded warm-up when `warmup`), with fresh logs.
  ArmWorker(const RunDirFs& run, const Plan& plan, const std::filesystem::path& worker,
            const Task& t, const Lane& lane, bool warmup);
  ArmWorker(const ArmWorker&) = delete;
  ArmWorker& operator=(const ArmWorker&) = delete;

  bool loaded() override;
  // Its turn: the GPU is its own from now on, and its time limit starts. A worker not started
  // ahead had its turn when it started; go() then only starts the limit.
  void go() override;
  // Reads its turn socket until it says it released the GPU, closes the socket or passes its
  // time limit. A worker not started ahead has no socket: false at once.
  bool released() override;
  // Waits for it to end within its time limit (killing its process group when the limit passes)
  // and closes its logs.
  ExitStatus finish() override;

 private:
  using Clock = std::chrono::steady_clock;

  double timeout_s_;
  UniqueFd out_, err_;  // its logs, open until it ends
  UniqueFd turn_;       // our end of its turn socket (started ahead only)
  std::unique_ptr<ChildProcess> child_;
  Clock::time_point since_;
  std::optional<Clock::time_point> deadline_;
};

// Starts each step's worker as an ArmWorker of `plan`, running `worker` (abharness-worker; a
// Python arm runs the plan's interpreter on the Python front end beside it).
class WorkerProcesses : public WorkerStarter {
 public:
  WorkerProcesses(const Plan& plan, std::filesystem::path worker)
      : plan_(plan), worker_(std::move(worker)) {}
  std::unique_ptr<ArmProcess> start(const RunDirFs& run, const Lane& lane,
                                    const Step& step) const override;

 private:
  const Plan& plan_;
  std::filesystem::path worker_;
};

}  // namespace abh
