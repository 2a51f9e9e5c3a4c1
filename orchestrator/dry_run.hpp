// The last check before plan.json is written: each variant's built plugin is given the grid's
// shapes without measuring anything, so that a parameter the plugin does not know, a tactic it
// does not have, a module that does not import (a missing numpy) or a timer that cannot time its
// device is refused before the first arm, naming the shape, the parameter and the plugin, instead
// of failing arm by arm (docs/provenance.md, "Checked before anything is built").
//
//  - A C++ plugin: `abharness-worker check` creates and destroys the problem of each distinct
//    shape, on the host, or on the plan's first GPU for a CUDA plugin (not checked where the GPU is
//    not here: a Slurm lane's node; that is said on the log).
//  - A Python plugin: its interpreter imports its module from the variant's sources as an arm's
//    launcher does, and for a CPU plugin calls the entry with each distinct shape's parameters; a
//    CUDA plugin's problems are made by its arms only, on the stream their worker binds. Where
//    this process starts the first workers ahead, they import a CUDA plugin's module before the
//    first turn and the sweep waits for them (sweep.cpp): no interpreter of its own does it again.
#pragma once

#include <exception>
#include <filesystem>
#include <functional>
#include <future>
#include <iosfwd>
#include <mutex>

#include "model/plan.hpp"

namespace abh {

// `plan` has its variants, shapes, settings, interpreter and machine; nothing is written but
// scratch files under run_dir/logs/check. UsageError naming the variant, the shape and the fix.
void dry_run_plugins(const Plan& plan, const std::filesystem::path& run_dir,
                     const std::filesystem::path& worker, std::ostream& log);

// The dry run of a run whose plan is written, beside the start of its first workers: it starts
// at once, in the background, and the sweep's first turn waits for it (SweepOptions::
// before_first_turn), so the workers import their plugins meanwhile (a Python worker's `import
// torch`, 4 s on the H200, was spent after the dry run's own imports before). A passed dry run
// is recorded in the run directory (logs/check/passed); a run killed before that point has its
// dry run done again by `resume`, before any arm.
class DryRunGate {
 public:
  // Starts the dry run unless the run directory records one that passed. `on_pass` is called
  // once, when it has passed (`run` keeps its new directory then).
  DryRunGate(const Plan& plan, std::filesystem::path run_dir, std::filesystem::path worker,
             std::function<void()> on_pass = {});
  ~DryRunGate();
  DryRunGate(const DryRunGate&) = delete;
  DryRunGate& operator=(const DryRunGate&) = delete;
  // Waits for the dry run; rethrows what it threw, to every caller. Safe from several threads.
  void wait();

 private:
  std::filesystem::path run_dir_;
  std::future<void> running_;
  std::function<void()> on_pass_;
  std::mutex m_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace abh
