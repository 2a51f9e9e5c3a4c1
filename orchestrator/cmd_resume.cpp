// `abharness resume` (and `run --resume`): reopen a run directory, check that it is still the
// planned sweep, and run only the arms that have no valid result.
#include <iostream>
#include <set>

#include "adaptive_sweep.hpp"
#include "arm_worker.hpp"
#include "bisect/spec.hpp"
#include "conclude.hpp"
#include "dry_run.hpp"
#include "exit_codes.hpp"
#include "interrupt_hint.hpp"
#include "launcher.hpp"
#include "measuring_lock.hpp"
#include "paths.hpp"
#include "planner.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "run_command.hpp"
#include "run_lock.hpp"
#include "sweep.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// The run-relative paths of the results that passed validation: they are not measured again.
std::set<std::string> valid_results(const Validation& v) {
  std::set<std::string> done;
  for (const auto& o : v.outcomes)
    if (o.result) done.insert(result_rel(o.task).generic_string());
  return done;
}

// The adaptive rule of a resumed extension decides with the plan's statistics options, whatever
// the report is asked for: said when they differ.
void note_decision_options(const Plan& plan, const StatsOptions& report) {
  if (plan.schedule.until_decided > 0 && report != plan.schedule.decision)
    std::cerr << "note: the report uses the statistics options given; the --until-decided blocks "
                 "are still decided with the plan's "
              << to_json(plan.schedule.decision).dump() << "\n";
}

}  // namespace

int resume_run(const fs::path& run_dir_in, const ReportFlags& flags, const PlanRequest* requested) {
  const fs::path run_dir = fs::absolute(run_dir_in).lexically_normal();
  // The report's options are checked before anything runs, not after every arm measured.
  validate(flags.stats);
  RunLock lock(run_dir);
  const InterruptHint interrupted(run_dir);
  Plan plan = load_plan(run_dir);
  const fs::path worker = worker_binary();
  if (requested) check_same_sweep(run_dir, plan, *requested, worker);
  note_decision_options(plan, flags.stats);
  check_resumable(run_dir, plan, worker);
  Validation before = validate_run(run_dir, plan, adaptive_blocks);
  // A lane that runs elsewhere (a Slurm job that outlived its orchestrator) may be writing one
  // of these right now: its own next job removes the ones it left.
  if (!launcher_places_lanes(plan.launcher))
    for (const auto& rel : before.leftovers) {
      std::cerr << "removing interrupted write " << rel << "\n";
      RunDirFs(run_dir).remove(rel);
    }
  if (!before.problems.empty()) {
    print_problems(before, run_dir_in);
    return exit_code::kProvenance;
  }
  auto done = valid_results(before);
  std::cerr << "resume " << plan.run_id << ": " << done.size() << " of " << before.outcomes.size()
            << " arms already valid\n";
  // From the dry run to the last arm, no other run measures where this one does.
  const std::optional<MeasuringLocks> machine = measuring_locks_for(plan, run_dir);
  // A run killed during its dry run has none recorded: done again, beside the first workers.
  DryRunGate dry_run(plan, run_dir, worker);
  SweepOptions options = sweep_options(flags);
  options.before_first_turn = [&dry_run] { dry_run.wait(); };
  const Launcher& launcher = launcher_named(plan.launcher.name);
  const SweepSummary s = launcher.run(run_dir, plan, worker, done, options);
  dry_run.wait();
  if (s.lost) std::cerr << s.lost << " arm(s) lost with their Slurm job\n";
  // An interrupted extension continues; a block still waiting on a failed arm does not.
  if (s.failed == 0 && s.lost == 0 && launcher.runs_until_decided())
    run_adaptive_blocks(run_dir, plan, WorkerProcesses(plan, worker),
                        warmed_by(sweep_options(flags), s));
  return conclude(run_dir, plan, validate_run(run_dir, plan, adaptive_blocks, &before), flags);
}

void add_resume_command(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto flags = std::make_shared<ReportFlags>();
  auto* c = app.add_subcommand("resume", "run only the missing or failed arms of a run");
  c->add_option("run", *dir, "run directory")->required()->check(CLI::ExistingDirectory);
  add_report_flags(*c, *flags);
  c->footer(
      "Example:\n  abharness resume runs/20261129-120000-abc123\nA bisect directory (abharness "
      "bisect) continues its search: each probe resumes where it stopped.");
  c->callback([dir, flags, &exit_code] {
    exit_code = bisect::is_bisect_dir(*dir) ? resume_bisect(*dir, *flags)
                                            : resume_run(*dir, *flags, nullptr);
  });
}

}  // namespace abh
