// `abharness run`: plan a sweep in a new run directory and run it (or, with --resume, reopen one).
#include <unistd.h>

#include <iostream>
#include <optional>

#include "adaptive_sweep.hpp"
#include "arm_worker.hpp"
#include "conclude.hpp"
#include "dry_run.hpp"
#include "fraction_option.hpp"
#include "interrupt_hint.hpp"
#include "launcher.hpp"
#include "measuring_lock.hpp"
#include "new_run_dir.hpp"
#include "paths.hpp"
#include "planner.hpp"
#include "report/adaptive.hpp"
#include "run_command.hpp"
#include "run_lock.hpp"
#include "sweep.hpp"
#include "system/error.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

struct RunFlags {
  PlanRequest plan;
  std::string runs_root = "runs";
  std::string run_id;
  std::string resume_dir;
  ReportFlags report;
};

std::vector<std::string>& argv_store() {
  static std::vector<std::string> v;
  return v;
}

int start_run(const RunFlags& f) {
  return run_new_sweep(f.plan, f.runs_root, f.run_id, f.report);
}

}  // namespace

void add_measure_flags(CLI::App& c, MeasureSettings& s) {
  c.add_option("--timer", s.timer, "auto | cupti | events | steady")->capture_default_str();
  c.add_option("--timing", s.timing,
               "what is timed: kernel (the kernels' GPU time), graph (replayed CUDA graph, gaps "
               "included) and/or launch (host time until done), comma-separated; several: one "
               "row per shape and timing (docs/method.md)")
      ->capture_default_str();
  c.add_option("--stopping", s.stopping, "stopping rule: precision | stdrel | fixed")
      ->capture_default_str();
  c.add_option("--warmup", s.warmup_iterations, "warm-up iterations")->capture_default_str();
  c.add_option("--min-samples", s.min_samples, "minimum samples per arm")->capture_default_str();
  c.add_option("--min-time", s.min_time_s, "minimum wall-clock seconds of sampling per arm")
      ->capture_default_str();
  add_fraction_option(c, "--median-precision", s.median_precision,
                      "precision rule: target relative half-width of each arm's median interval "
                      "(0.1% or 0.001; 0: a tenth of --noise-band)")
      ->capture_default_str();
  add_fraction_option(c, "--max-noise", s.max_noise, "stdrel rule: target relative noise")
      ->capture_default_str();
  c.add_option("--max-time", s.max_time_s, "per-arm limit on measured seconds")
      ->capture_default_str();
  c.add_option("--max-samples", s.max_samples, "per-arm limit on samples")->capture_default_str();
  c.add_flag("--warm-l2", s.warm_l2, "do not flush L2 before each sample (default: cold)");
  c.add_option("--arm-timeout", s.arm_timeout_s, "seconds before a hung worker is killed")
      ->capture_default_str();
  c.add_option("--tactic", s.tactic,
               "auto (tune), default (the plugin's first tactic, untuned) or a tactic key")
      ->capture_default_str();
  add_fraction_option(c, "--clock-floor", s.clock_floor,
                      "GPU: discard samples whose SM clock ran below this fraction of peak (0: "
                      "keep all)")
      ->capture_default_str();
  c.add_option("--clock-recovery", s.clock_recovery_s,
               "GPU: seconds to idle after a discarded sample so clocks recover")
      ->capture_default_str();
}

namespace {

// Options of --launcher slurm; each lane is one job on one node and one GPU (docs/scale.md).
void add_slurm_flags(CLI::App& c, SlurmOptions& s) {
  c.add_option("--slurm-lanes", s.lanes, "slurm: jobs to spread the shapes over (one GPU each)")
      ->capture_default_str();
  c.add_option("--slurm-partition", s.partition, "slurm: partition of every job");
  c.add_option("--slurm-account", s.account, "slurm: account charged");
  c.add_option("--slurm-time", s.time, "slurm: time limit of each job (e.g. 1:00:00)");
  c.add_option("--slurm-gres", s.gres,
               "slurm: generic resources of each job (default gpu:1 for "
               "CUDA plugins)");
  c.add_option("--slurm-sbatch-arg", s.sbatch_args,
               "slurm: one more sbatch option, value attached (--slurm-sbatch-arg=--qos=high); "
               "repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// What the plan is made of: the revisions, the grid, the repository, the schedule.
void add_plan_flags(CLI::App& c, RunFlags& f) {
  PlanRequest& p = f.plan;
  c.add_option("--baseline", p.baseline, "baseline revision (commit, branch, tag, WORKTREE)");
  c.add_option("--candidate", p.candidate, "candidate revision (commit, branch, tag, WORKTREE)");
  c.add_option("--variants", p.variants_path,
               "variants file (JSON, docs/variants.md): a baseline and several candidates, each a "
               "revision with build and run settings; instead of --baseline/--candidate")
      ->check(CLI::ExistingFile);
  c.add_option("--grid", p.grid, "shapes file (JSON; `abharness grid` writes one)")
      ->check(CLI::ExistingFile);
  c.add_option("--shapes", p.shapes,
               "plan only these shapes of the grid: ids or shell patterns, comma-separated "
               "(m1_*,m4096_n4096_k4096); each must match a shape");
  c.add_option("--repo", p.repo, "kernel repository with abharness.json at its root")
      ->capture_default_str();
  c.add_option("--target", p.target, "plugin key in the repository's abharness.json")
      ->capture_default_str();
  c.add_option("--runs-root", f.runs_root, "directory that holds run directories")
      ->capture_default_str();
  c.add_option("--run-id", f.run_id, "name of the run directory (default: time + random)");
  c.add_option("--resume", f.resume_dir, "continue this run directory instead of a new one");
  c.add_option("--gpus", p.gpus, "GPU indices or UUIDs, comma-separated; shapes are sharded")
      ->capture_default_str();
  c.add_option("--python", p.python,
               "interpreter of Python plugins (default: the manifest's, else python3 on PATH)");
  c.add_option("--cpus", p.cpus,
               "CPUs the arms may use, e.g. 2-7 (default: all this process may use); the plan "
               "pins each arm to one of them (docs/method.md); local launcher only: a Slurm "
               "lane chooses its CPUs on its node");
  c.add_option("--launcher", p.launcher.name,
               "where lanes run: local (this machine) | slurm (one Slurm job per lane)")
      ->capture_default_str();
  add_slurm_flags(c, p.launcher.slurm);
  c.add_option("--schedule", p.schedule.name, "aba | abba | random")->capture_default_str();
  c.add_option("--rounds", p.schedule.rounds, "blocks per shape")->capture_default_str();
  add_seed_option(c, "--schedule-seed", p.schedule.seed, "seed of the random block order");
  c.add_option("--until-decided", p.until_decided,
               "up to this many more blocks for each shape still unstable or ambiguous after "
               "the planned ones, or called faster or slower on one candidate arm (a "
               "confirmation), but none a shape that all those left could not decide; local "
               "launcher only. auto: 3, or 0 with the Slurm launcher (docs/statistics.md)")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  c.add_option("--start-ahead", p.start_ahead,
               "workers a lane starts while the arms before them measure; each creates its CUDA "
               "context once the arm before it has ended (docs/method.md). 0: one after another; "
               "auto: 1 for GPU plugins, 8 for GPU plugins in Python, 0 for CPU plugins")
      ->capture_default_str();
  c.add_flag("--share-host", p.schedule.share_host,
             "let other runs given --share-host measure on other CPUs of this machine beside "
             "this one (give each its own --cpus); they share caches and memory bandwidth, and "
             "the report says so. Without it a CPU or launch-timed run has the machine to itself");
}

// An option given an empty value would silently mean what leaving it out means (--cpus "" every
// CPU, --run-id "" a fresh id, --resume "" a new run): refused instead, naming the option.
void refuse_empty_values(const CLI::App& c, const RunFlags& f) {
  const std::pair<const char*, const std::string*> options[] = {
      {"--cpus", &f.plan.cpus},     {"--python", &f.plan.python}, {"--run-id", &f.run_id},
      {"--resume", &f.resume_dir},  {"--repo", &f.plan.repo},     {"--runs-root", &f.runs_root},
      {"--target", &f.plan.target}, {"--gpus", &f.plan.gpus},     {"--shapes", &f.plan.shapes}};
  for (const auto& [name, value] : options)
    if (c.count(name) && value->empty())
      throw UsageError(std::string(name) + " \"\": give it a value, or leave " + name +
                       " out for its default (abharness run --help lists each)");
}

// Either a variants file or both revisions of the shorthand; the file is read here, so that a bad
// one is refused before anything else.
void read_variants_flags(const CLI::App& c, RunFlags& f) {
  const bool file = c.count("--variants") > 0;
  const bool revisions = c.count("--baseline") || c.count("--candidate");
  if (file && revisions)
    throw UsageError(
        "--variants names the baseline and the candidates itself: leave "
        "--baseline/--candidate out with it");
  if (file) {
    f.plan.variants_file = load_variants_file(f.plan.variants_path);
    return;
  }
  if (c.count("--resume")) return;  // the plan's variants, unless flags say otherwise
  if (!c.count("--baseline") || !c.count("--candidate"))
    throw UsageError(std::string(c.count("--baseline") ? "--candidate" : "--baseline") +
                     " is required: give both revisions (--baseline REV --candidate REV), or "
                     "--variants FILE for several candidates");
}

// --runs-root and --run-id, given with --resume, must name the run directory --resume gives.
void check_resume_dir_flags(const CLI::App& c, const RunFlags& f) {
  const fs::path given = absolute_dir(f.resume_dir), root = absolute_dir(f.runs_root);
  const auto refuse = [&](const std::string& flag, const std::string& what) {
    throw UsageError(flag + " names " + what + ", but --resume gives " + given.string() +
                     ": leave " + flag + " out with --resume, or make it name that directory");
  };
  if (c.count("--run-id") && fs::path(f.run_id) != given.filename())
    refuse("--run-id " + f.run_id, "the run " + f.run_id);
  if (c.count("--runs-root") && root != given.parent_path())
    refuse("--runs-root " + f.runs_root, "runs in " + root.string());
}

}  // namespace

int run_new_sweep(const PlanRequest& request, const fs::path& runs_root_in, std::string id,
                  const ReportFlags& report) {
  ResolvedRequest resolved = resolve_request(request);
  for (const std::string& note : run_settings_replacing_params(resolved))
    std::cerr << "abharness: note: " << note << "\n";
  const fs::path runs_root = fs::absolute(runs_root_in).lexically_normal();
  check_run_inputs(request, resolved, runs_root);
  // Removed again by a failure before the plan is written, unless a failed build's log is in it.
  NewRunDir dir(runs_root, id);
  const fs::path& run_dir = dir.path();
  RunLock lock(run_dir);
  std::cerr << "run " << id << " in " << run_dir.string() << "\n";

  const fs::path worker = worker_binary();
  Plan plan;
  // Interrupted while it builds, the run has nothing to resume: it says so, and what to remove.
  std::optional<InterruptHint> interrupted;
  interrupted.emplace(run_dir, InterruptHint::Stage::planning);
  try {
    plan = make_plan(request, resolved, id, run_dir, worker, build_cache_root(runs_root));
  } catch (const BuildFailed&) {
    dir.keep();
    throw;
  }
  // With its plan written, an interrupted run can be resumed, and says how.
  interrupted.reset();
  interrupted.emplace(run_dir);
  // From the dry run to the last arm, no other run measures where this one does.
  const std::optional<MeasuringLocks> machine = measuring_locks_for(plan, run_dir);
  // The plan is written; the directory stays once the dry run has passed, which it does while the
  // first workers load. A failure there removes the directory, with nothing measured in it.
  DryRunGate dry_run(plan, run_dir, worker, [&dir] { dir.keep(); });
  SweepOptions options = sweep_options(report);
  options.before_first_turn = [&dry_run] { dry_run.wait(); };
  const Launcher& launcher = launcher_named(plan.launcher.name);
  SweepSummary s = launcher.run(run_dir, plan, worker, {}, options);
  dry_run.wait();  // a sweep with no turn to take never waited
  if (s.failed) std::cerr << s.failed << " arm(s) failed\n";
  if (s.lost) std::cerr << s.lost << " arm(s) lost with their Slurm job\n";
  // A failed or lost arm stops the extension: the next decision would rest on a missing arm.
  if (s.failed == 0 && s.lost == 0 && launcher.runs_until_decided())
    run_adaptive_blocks(run_dir, plan, WorkerProcesses(plan, worker),
                        warmed_by(sweep_options(report), s));
  return conclude(run_dir, plan, validate_run(run_dir, plan, adaptive_blocks), report);
}

void set_invocation_argv(int argc, char** argv) {
  argv_store().assign(argv, argv + argc);
}
const std::vector<std::string>& invocation_argv() {
  return argv_store();
}

SweepOptions sweep_options(const ReportFlags& f) {
  SweepOptions o;
  o.quiet = f.quiet;
  o.tty = ::isatty(STDERR_FILENO);
  return o;
}

void add_run_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<RunFlags>();
  auto* c = app.add_subcommand(
      "run", "build two revisions (or the variants of a file) and compare them A1/B/A2 per shape");
  add_plan_flags(*c, *f);
  add_measure_flags(*c, f->plan.settings);
  add_report_flags(*c, f->report);
  c->footer(R"(Examples:
  abharness run --baseline main --candidate my-branch --grid shapes.json
  abharness run --baseline HEAD --candidate WORKTREE --grid shapes.json --target cuda --gpus 0,1
  abharness run --baseline v1.2 --candidate HEAD --grid g.json --schedule abba --rounds 2 --fail-on-regression
  abharness run --baseline main --candidate HEAD --grid g.json --target cuda --launcher slurm --slurm-lanes 8 --slurm-partition gpu
  abharness run --variants variants.json --grid shapes.json
Exit codes: 0 complete, 1 error, 2 usage, 3 provenance failure, 4 incomplete, 5 regression,
6 undecided (with --fail-on-regression; docs/exit-codes.md).)");
  c->callback([c, f, &exit_code] {
    f->plan.argv = invocation_argv();
    refuse_empty_values(*c, *f);
    read_variants_flags(*c, *f);
    set_until_decided(f->plan);
    if (c->count("--resume")) {
      check_resume_dir_flags(*c, *f);
      // Left out, these are the plan's (as `abharness resume` takes them), not their defaults.
      for (const auto& [name, value] : {std::pair{"--repo", &f->plan.repo},
                                        {"--target", &f->plan.target},
                                        {"--gpus", &f->plan.gpus}})
        if (!c->count(name)) value->clear();
      exit_code = resume_run(f->resume_dir, f->report, &f->plan);
      return;
    }
    if (f->plan.grid.empty()) throw UsageError("--grid is required: give a shapes file");
    // The adaptive rule judges with this run's statistics options, recorded in the plan.
    f->plan.schedule.decision = f->report.stats;
    exit_code = start_run(*f);
  });
}

}  // namespace abh
