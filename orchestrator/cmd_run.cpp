// `abharness run` plans a sweep and runs it; `abharness resume` (or `run --resume`) reopens one.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <random>
#include <sstream>

#include "conclude.hpp"
#include "system/error.hpp"
#include "exit_codes.hpp"
#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "provenance/provenance.hpp"
#include "report/report_render.hpp"
#include "run_command.hpp"
#include "run_lock.hpp"
#include "system/sha256.hpp"
#include "stats/statistics.hpp"
#include "sweep.hpp"
#include "variants.hpp"
#include "system/version.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

struct RunFlags {
  std::string repo = ".";
  std::string baseline, candidate, grid;
  std::string target = "cpu";
  std::string runs_root = "runs";
  std::string run_id;
  std::string resume_dir;
  std::string gpus = "0";
  ScheduleOptions schedule;
  MeasureSettings settings;
  ReportFlags report;
  std::vector<std::string> argv;
};

std::string utc_stamp(const char* fmt) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

std::vector<std::string> split_gpus(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw UsageError("--gpus '" + s + "': give GPU indices or UUIDs, e.g. 0,1");
  return out;
}

// The machine the plan is for: one entry per GPU for CUDA plugins, the host for CPU plugins.
std::vector<Environment> probe_machine(const fs::path& worker, bool cuda,
                                       const std::vector<std::string>& gpus,
                                       const fs::path& scratch) {
  std::vector<Environment> out;
  if (!cuda) {
    out.push_back(environment_from_json(worker_json(worker, worker_protocol::probe_args(), scratch),
                                        "host probe"));
    return out;
  }
  for (const auto& g : gpus) {
    // Workers see only their own GPU (sweep.cpp); the plan records each GPU as they see it, so a
    // result's environment can be compared with it. A selector that is not a UUID is resolved
    // first.
    std::string uuid = g;
    if (g.rfind("GPU-", 0) != 0) {
      Environment e = environment_from_json(
          worker_json(worker, worker_protocol::probe_args(g), scratch), "probe of GPU " + g);
      if (!e.gpu) throw Error("the probe of GPU " + g + " describes no GPU");
      uuid = e.gpu->uuid;
    }
    out.push_back(
        environment_from_json(worker_json(worker, worker_protocol::probe_args(uuid), scratch,
                                          {{worker_protocol::kVisibleDevicesEnv, uuid}}),
                              "probe of GPU " + g));
  }
  return out;
}

bool any_cuda(const Plan& p) {
  for (const auto& v : p.variants)
    if (v.device == "cuda") return true;
  return false;
}

std::set<std::string> valid_results(const fs::path& run_dir, const Validation& v) {
  std::set<std::string> done;
  for (const auto& o : v.outcomes)
    if (o.result) done.insert(fs::relative(result_path(run_dir, o.task), run_dir).generic_string());
  return done;
}

SweepOptions sweep_options(const ReportFlags& f) {
  SweepOptions o;
  o.quiet = f.quiet;
  o.tty = ::isatty(STDERR_FILENO);
  return o;
}

int resume_run(const fs::path& run_dir, const ReportFlags& flags, const RunFlags* requested);

int start_run(RunFlags f) {
  validate(f.settings);
  Grid grid = load_grid(f.grid);
  const fs::path repo = fs::absolute(f.repo).lexically_normal();
  if (!fs::exists(repo)) throw UsageError("--repo " + repo.string() + " does not exist");

  // Resolve both revisions to identities once, before anything runs: from here on "baseline"
  // means this commit (and digest), whatever the branch name later points to.
  // A revision that cannot be resolved is the user's to fix: a usage error naming the flag.
  auto resolve = [&](const std::string& flag, const std::string& rev) {
    try {
      return compute_source_identity(repo, rev);
    } catch (const std::exception& e) {
      throw UsageError(flag + ": " + e.what());
    }
  };
  SourceIdentity base = resolve("--baseline", f.baseline);
  SourceIdentity cand = resolve("--candidate", f.candidate);

  const fs::path runs_root = fs::absolute(f.runs_root).lexically_normal();
  std::string id = f.run_id;
  if (id.empty()) {
    std::random_device rd;
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%06x", rd() & 0xffffff);
    id = utc_stamp("%Y%m%d-%H%M%S-") + suffix;
  }
  check_safe_name(id, "--run-id");
  const fs::path run_dir = runs_root / id;
  if (fs::exists(run_dir))
    throw UsageError("run directory " + run_dir.string() +
                     " already exists: use `abharness resume " + run_dir.string() +
                     "` to continue it, or another --run-id");
  fs::create_directories(run_dir);
  // runs/ often sits inside the kernel repository: a .gitignore of "*" keeps it out of every
  // WORKTREE identity (and out of `git status`), so a sweep never changes what it measures.
  if (!fs::exists(runs_root / ".gitignore")) write_file_atomic(runs_root / ".gitignore", "*\n");
  RunLock lock(run_dir);
  std::cerr << "run " << id << " in " << run_dir.string() << "\n";

  const fs::path worker = worker_binary();
  const fs::path cache_root = runs_root / ".cache" / "builds";
  Plan plan;
  plan.schema_version = kPlanSchemaVersion;
  plan.harness_version = kHarnessVersion;
  plan.run_id = id;
  plan.created_at = utc_stamp("%Y-%m-%dT%H:%M:%SZ");
  plan.repo = repo.string();
  plan.plugin_target = f.target;
  plan.command = f.argv;
  plan.worker_sha256 = sha256_file(worker);
  for (auto [name, src] : {std::pair{"baseline", &base}, std::pair{"candidate", &cand}})
    plan.variants.push_back(prepare_variant(repo, VariantRequest{name, *src, f.target}, run_dir,
                                            cache_root, worker, std::cerr));
  plan.shapes = grid.shapes;
  plan.settings = f.settings;
  auto gpus = split_gpus(f.gpus);
  const bool cuda = any_cuda(plan);
  plan.schedule = f.schedule;
  plan.schedule.gpus = cuda ? static_cast<int>(gpus.size()) : 1;
  plan.tasks = make_schedule(plan.shapes, plan.schedule);
  plan.machine = probe_machine(worker, cuda, gpus, run_dir / "logs" / "probe");
  // Written once, before any arm runs; never edited afterwards.
  write_json_atomic(plan_path(run_dir), to_json(plan));

  SweepSummary s = run_sweep(run_dir, plan, worker, {}, sweep_options(f.report));
  if (s.failed) std::cerr << s.failed << " arm(s) failed\n";
  return conclude(run_dir, plan, validate_run(run_dir, plan), f.report);
}

// Refuses to resume when anything the plan fixed has changed: binaries, sources, machine.
void check_resumable(const fs::path& run_dir, const Plan& plan, const fs::path& worker) {
  auto refuse = [&](const std::string& what) {
    throw UsageError("cannot resume " + run_dir.string() + ": " + what +
                     "; start a new run instead (results measured under different conditions "
                     "must not be mixed)");
  };
  std::string w = sha256_file(worker);
  if (w != plan.worker_sha256)
    refuse("the worker binary changed since the plan (plan " + plan.worker_sha256.substr(0, 12) +
           ", now " + w.substr(0, 12) + ")");
  for (const auto& v : plan.variants) {
    fs::path plugin = run_dir / v.plugin;
    if (!fs::exists(plugin)) refuse("the " + v.name + " plugin " + v.plugin + " is missing");
    std::string h = sha256_file(plugin);
    if (h != v.plugin_sha256)
      refuse("the " + v.name + " plugin " + v.plugin + " changed (plan " +
             v.plugin_sha256.substr(0, 12) + ", now " + h.substr(0, 12) + ")");
    if (v.source.kind == "worktree") {
      SourceIdentity now = compute_source_identity(plan.repo, v.source.requested);
      if (now.digest != v.source.digest)
        refuse("the working tree of " + plan.repo + " changed since the plan (" + v.name +
               " identity " + v.source.digest.substr(0, 12) + ", now " + now.digest.substr(0, 12) +
               ")");
    }
  }
  std::vector<std::string> gpus;
  for (const auto& m : plan.machine)
    if (m.gpu) gpus.push_back(m.gpu->uuid);
  auto now = probe_machine(worker, any_cuda(plan), gpus, run_dir / "logs" / "probe");
  for (size_t i = 0; i < plan.machine.size(); ++i) {
    json a = to_json(plan.machine[i]), b = to_json(now.at(i));
    for (auto it = a.begin(); it != a.end(); ++it)
      if (b[it.key()] != *it)
        refuse("the machine differs from the plan: " + it.key() + " was " + it->dump() + ", now " +
               b[it.key()].dump());
  }
}

int resume_run(const fs::path& run_dir_in, const ReportFlags& flags, const RunFlags* requested) {
  const fs::path run_dir = fs::absolute(run_dir_in).lexically_normal();
  RunLock lock(run_dir);
  Plan plan = load_plan(run_dir);
  if (requested) {
    // `run --resume` with flags: they must describe the same sweep.
    if (requested->settings != plan.settings)
      throw UsageError("cannot resume " + run_dir.string() +
                       ": the measurement settings given differ from the plan's " +
                       to_json(plan.settings).dump());
    if (plan.variants.at(0).source.requested != requested->baseline ||
        plan.variants.at(1).source.requested != requested->candidate)
      throw UsageError("cannot resume " + run_dir.string() + ": the plan compares '" +
                       plan.variants[0].source.requested + "' with '" +
                       plan.variants[1].source.requested + "'");
    if (!requested->grid.empty() && load_grid(requested->grid).shapes != plan.shapes)
      throw UsageError("cannot resume " + run_dir.string() + ": --grid " + requested->grid +
                       " differs from the plan's shapes");
  }
  const fs::path worker = worker_binary();
  check_resumable(run_dir, plan, worker);
  Validation before = validate_run(run_dir, plan);
  for (const auto& rel : before.leftovers) {
    std::cerr << "removing interrupted write " << rel << "\n";
    fs::remove(run_dir / rel);
  }
  if (!before.problems.empty()) {
    print_problems(before);
    return exit_code::kProvenance;
  }
  auto done = valid_results(run_dir, before);
  std::cerr << "resume " << plan.run_id << ": " << done.size() << " of " << plan.tasks.size()
            << " arms already valid\n";
  run_sweep(run_dir, plan, worker, done, sweep_options(flags));
  return conclude(run_dir, plan, validate_run(run_dir, plan, &before), flags);
}

void add_measure_flags(CLI::App& c, RunFlags& f) {
  auto& s = f.settings;
  c.add_option("--timer", s.timer, "auto | cupti | events | steady")->capture_default_str();
  c.add_option("--stopping", s.stopping, "stopping rule: stdrel | fixed")->capture_default_str();
  c.add_option("--warmup", s.warmup_iterations, "warm-up iterations")->capture_default_str();
  c.add_option("--min-samples", s.min_samples, "minimum samples per arm")->capture_default_str();
  c.add_option("--min-time", s.min_time_s, "minimum measured seconds per arm")
      ->capture_default_str();
  c.add_option("--max-noise", s.max_noise, "target relative std deviation")->capture_default_str();
  c.add_option("--max-time", s.max_time_s, "per-arm limit on measured seconds")
      ->capture_default_str();
  c.add_option("--max-samples", s.max_samples, "per-arm limit on samples")->capture_default_str();
  c.add_flag("--warm-l2", s.warm_l2, "do not flush L2 before each sample (default: cold)");
  c.add_option("--arm-timeout", s.arm_timeout_s, "seconds before a hung worker is killed")
      ->capture_default_str();
  c.add_option("--tactic", s.tactic, "auto (tune) or a tactic key")->capture_default_str();
  c.add_option("--clock-floor", s.clock_floor,
               "GPU: discard samples whose SM clock ran below this fraction of peak (0: keep all)")
      ->capture_default_str();
  c.add_option("--clock-recovery", s.clock_recovery_s,
               "GPU: seconds to idle after a discarded sample so clocks recover")
      ->capture_default_str();
}

}  // namespace

namespace {
std::vector<std::string>& argv_store() {
  static std::vector<std::string> v;
  return v;
}
}  // namespace

void set_invocation_argv(int argc, char** argv) {
  argv_store().assign(argv, argv + argc);
}
const std::vector<std::string>& invocation_argv() {
  return argv_store();
}

void add_report_flags(CLI::App& c, ReportFlags& f) {
  c.add_option("--noise-band", f.noise_band, "relative band treated as no change")
      ->capture_default_str();
  c.add_option("--confidence", f.confidence, "confidence level of intervals")
      ->capture_default_str();
  c.add_option("--resamples", f.resamples, "bootstrap resamples")->capture_default_str();
  c.add_option("--seed", f.seed, "bootstrap seed")->capture_default_str();
  c.add_flag("--raw-clocks", f.raw_clocks,
             "compare GPU arms at the clocks they ran at, not moved to one SM clock per shape");
  c.add_flag("--fail-on-regression", f.fail_on_regression,
             "exit 5 when a shape is slower beyond the noise band");
  c.add_flag("-q,--quiet", f.quiet, "no progress line and no table (reports are still written)");
  c.add_option("--color", f.color, "auto | always | never")->capture_default_str();
  c.add_option("--print", f.print,
               "format printed on stdout: terminal | markdown | json | csv | svg (json for CI)")
      ->capture_default_str()
      ->check(CLI::IsMember(report_formats()));
}

void add_run_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<RunFlags>();
  auto* c = app.add_subcommand("run", "build two revisions and compare them A1/B/A2 per shape");
  c->add_option("--baseline", f->baseline, "baseline revision (commit, branch, tag, WORKTREE)")
      ->required();
  c->add_option("--candidate", f->candidate, "candidate revision (commit, branch, tag, WORKTREE)")
      ->required();
  c->add_option("--grid", f->grid, "shapes file (JSON; `abharness grid` writes one)")
      ->check(CLI::ExistingFile);
  c->add_option("--repo", f->repo, "kernel repository with abharness.json at its root")
      ->capture_default_str();
  c->add_option("--target", f->target, "plugin key in the repository's abharness.json")
      ->capture_default_str();
  c->add_option("--runs-root", f->runs_root, "directory that holds run directories")
      ->capture_default_str();
  c->add_option("--run-id", f->run_id, "name of the run directory (default: time + random)");
  c->add_option("--resume", f->resume_dir, "continue this run directory instead of a new one");
  c->add_option("--gpus", f->gpus, "GPU indices or UUIDs, comma-separated; shapes are sharded")
      ->capture_default_str();
  c->add_option("--schedule", f->schedule.name, "aba | abba | random")->capture_default_str();
  c->add_option("--rounds", f->schedule.rounds, "blocks per shape")->capture_default_str();
  c->add_option("--schedule-seed", f->schedule.seed, "seed of the random block order")
      ->capture_default_str();
  add_measure_flags(*c, *f);
  add_report_flags(*c, f->report);
  c->footer(R"(Examples:
  abharness run --baseline main --candidate my-branch --grid shapes.json
  abharness run --baseline HEAD --candidate WORKTREE --grid shapes.json --target cuda --gpus 0,1
  abharness run --baseline v1.2 --candidate HEAD --grid g.json --schedule abba --rounds 2 --fail-on-regression
Exit codes: 0 complete, 1 error, 2 usage, 3 provenance failure, 4 incomplete, 5 regression.)");
  c->callback([f, &exit_code] {
    f->argv = invocation_argv();
    if (!f->resume_dir.empty()) {
      exit_code = resume_run(f->resume_dir, f->report, f.get());
      return;
    }
    if (f->grid.empty()) throw UsageError("--grid is required: give a shapes file");
    exit_code = start_run(*f);
  });
}

void add_resume_command(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto flags = std::make_shared<ReportFlags>();
  auto* c = app.add_subcommand("resume", "run only the missing or failed arms of a run");
  c->add_option("run", *dir, "run directory")->required()->check(CLI::ExistingDirectory);
  add_report_flags(*c, *flags);
  c->footer("Example:\n  abharness resume runs/20261129-120000-abc123");
  c->callback([dir, flags, &exit_code] { exit_code = resume_run(*dir, *flags, nullptr); });
}

void add_verify_command(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto* c = app.add_subcommand("verify", "validate every result of a run against its plan");
  c->add_option("run", *dir, "run directory")->required()->check(CLI::ExistingDirectory);
  c->footer(
      "Example:\n  abharness verify runs/20261129-120000-abc123\nPrints the result-set "
      "digest that reports quote; exit 3 names each file and field that failed.");
  c->callback([dir, &exit_code] {
    Plan plan = load_plan(*dir);
    Validation v = validate_run(*dir, plan);
    if (!v.problems.empty()) {
      print_problems(v);
      exit_code = exit_code::kProvenance;
      return;
    }
    int valid = 0;
    for (const auto& o : v.outcomes) valid += o.result ? 1 : 0;
    std::cout << "verified " << valid << " of " << plan.tasks.size() << " planned results of run "
              << plan.run_id << "\nresult-set digest: " << v.result_set_digest << "\n";
    exit_code = v.complete() ? exit_code::kSuccess : exit_code::kIncomplete;
  });
}

void add_report_command(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto flags = std::make_shared<ReportFlags>();
  auto* c = app.add_subcommand("report", "re-render the reports of a run (validates it first)");
  c->add_option("run", *dir, "run directory")->required()->check(CLI::ExistingDirectory);
  add_report_flags(*c, *flags);
  c->footer("Example:\n  abharness report runs/20261129-120000-abc123 --noise-band 0.02");
  c->callback([dir, flags, &exit_code] {
    Plan plan = load_plan(*dir);
    exit_code = conclude(*dir, plan, validate_run(*dir, plan), *flags);
  });
}

}  // namespace abh
