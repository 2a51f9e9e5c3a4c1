// Runs the planned arms that still need running, each in a fresh worker process with its logs,
// and records a failure record for each arm that crashed, failed, hung or produced a wrong
// result. A failure never stops the sweep. Shapes on different GPUs run concurrently; the arms
// of one shape always run back to back on one GPU. The sweep decides the order (which worker
// starts when, which one has its turn); the processes come from a WorkerStarter
// (worker_starter.hpp): WorkerProcesses (arm_worker.hpp) in the commands, fakes in unit tests.
#pragma once

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "lane.hpp"
#include "model/plan.hpp"
#include "worker_starter.hpp"

namespace abh {

struct SweepOptions {
  bool quiet = false;
  bool tty = false;  // redraw one progress line instead of printing one per arm
  // Which of the plan's tasks to run (those not yet done); unset: the planned, non-conditional
  // ones. The adaptive rounds (adaptive_sweep.hpp) select the conditional blocks they call for.
  std::function<bool(const Task&)> select;
  // Variants whose arms this invocation has measured on this machine already: the machine and
  // their plugins are warm, so their lanes start without a warm-up worker (sweep.cpp, lane_steps).
  // An adaptive round after the planned sweep paid 6.7 s for two Python warm-ups on the H200.
  std::set<std::string> warm;
  // Called by each lane before its first worker's turn, once the workers it starts ahead are
  // loading (sweep.cpp, run_steps), and by a launcher whose lanes run elsewhere before it starts
  // them. A new run's dry run (dry_run.hpp) ends there: it runs while the first workers import
  // their plugins, and what it throws stops the sweep before any arm has measured. Must be safe
  // to call from several lanes' threads; unset: nothing to wait for.
  std::function<void()> before_first_turn;
};

struct SweepSummary {
  int ran = 0;
  int failed = 0;
  int skipped = 0;  // already valid
  int lost = 0;     // in a lane whose process or job ended before they ran (Slurm)
  std::set<std::string> variants_ran;  // variants of the arms that ran, failed ones included
};

// `opt` with the variants that `ran` measured counted as warm.
inline SweepOptions warmed_by(SweepOptions opt, const SweepSummary& ran) {
  opt.warm.insert(ran.variants_ran.begin(), ran.variants_ran.end());
  return opt;
}

// The run-relative result path of a task, as `done` sets hold it.
std::string result_key(const std::filesystem::path& run_dir, const Task& t);

// Runs the lanes at once, one thread each, and returns when all of them have finished.
SweepSummary run_lanes(const std::filesystem::path& run_dir, const Plan& plan,
                       const WorkerStarter& starter, const std::vector<Lane>& lanes,
                       const SweepOptions& opt);

// Every lane of the plan on this machine's GPUs. `done` holds the run-relative result paths that
// are already valid and must not be measured again.
SweepSummary run_sweep(const std::filesystem::path& run_dir, const Plan& plan,
                       const WorkerStarter& starter, const std::set<std::string>& done,
                       const SweepOptions& opt);

}  // namespace abh
