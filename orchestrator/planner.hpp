// The planner: what a sweep is, fixed before any arm runs, and the check that a resumed sweep is
// still that sweep. A new run is resolved first (settings in range, the grid readable, both
// revisions turned into source identities) and only then planned inside its run directory: both
// variants built, the machine probed, plan.json written once and never edited. A resume is refused
// before anything runs when something the plan fixed has changed (binaries, sources, machine, or
// the flags given to `run --resume`): results measured under different conditions must not be
// mixed. docs/provenance.md describes what the plan records and what resume refuses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/environment.hpp"
#include "model/grid.hpp"
#include "model/identity.hpp"
#include "model/launch.hpp"
#include "model/plan.hpp"
#include "model/schedule.hpp"
#include "model/settings.hpp"
#include "model/variants_file.hpp"

namespace abh {

// What `abharness run` asks for: everything that decides the plan.
struct PlanRequest {
  std::string repo = ".";
  std::string baseline, candidate;  // --baseline/--candidate: the two-variant shorthand
  // --variants FILE: the file as read (model/variants_file.hpp); the shorthand's two otherwise.
  std::optional<VariantsFile> variants_file;
  std::string variants_path;  // the file's path as given, for messages and resume
  std::string grid;           // path of the shapes file
  std::string shapes;         // --shapes: ids or patterns of the grid's shapes to plan (empty: all)
  std::string target = "cpu";
  std::string gpus = "0";  // --gpus: indices or UUIDs, comma-separated
  std::string python;      // --python: the interpreter of Python plugins (empty: the default)
  std::string cpus;        // --cpus: the CPUs arms may use (a list like 0-3,8); empty: all allowed
  LauncherSpec launcher;   // --launcher and its options
  ScheduleOptions schedule;
  // --start-ahead: how many workers a lane starts ahead of their turn (0 to 16), or auto.
  std::string start_ahead = "auto";
  // --until-decided: a number, or auto (set_until_decided). schedule.until_decided holds a number
  // given; with auto, schedule.until_decided_auto is set and make_plan chooses the number.
  std::string until_decided = "auto";
  MeasureSettings settings;
  std::vector<std::string> argv;  // the command line, recorded in the plan
};

// The variants a request compares, the baseline first: the variants file's, or the two of
// --baseline/--candidate.
std::vector<VariantSpec> requested_variants(const PlanRequest& req);
// Their names, in that order (what make_schedule takes).
std::vector<std::string> variant_names(const std::vector<VariantSpec>& variants);

// One variant of the request with its revision resolved.
struct ResolvedVariant {
  VariantSpec spec;
  SourceIdentity source;
};

// A request checked and resolved before a run directory exists, so that a typo costs nothing.
struct ResolvedRequest {
  std::filesystem::path repo;  // absolute
  Grid grid;
  std::vector<ResolvedVariant> variants;  // the baseline first
  // With --until-decided auto: the most conditional blocks that keep plan.json within
  // kAutoPlanBytes (check_schedule); make_plan never plans more.
  int auto_blocks_cap = 0;
};

// Checks every option (preflight.hpp), reads the grid and keeps the shapes --shapes selects
// (shape_filter.hpp; UsageError for a pattern matching none), checks the schedule against it (the
// plan must fit what its reader accepts) and resolves both revisions to identities once: from here
// on "baseline" means this commit (and digest), whatever the branch name later points to. Throws
// UsageError naming the flag.
ResolvedRequest resolve_request(const PlanRequest& req);

// A variant's run setting that replaces a grid parameter of the same name with another value
// (variants `"run": {"m": 8}` on a grid of m = 32) makes its arms measure another problem than
// the shape's id and the other variants' arms: one line per setting, naming the variant, the
// setting and the shapes it changes. Allowed (it is how a parameter is swept per variant), but
// said before anything is measured.
std::vector<std::string> run_settings_replacing_params(const ResolvedRequest& resolved);

// Refuses, before anything is built, what the plan could not record or the run would spoil:
//  - a command line item, the repository or the runs root (as absolute paths) that is not UTF-8:
//    the plan and results are JSON, which holds UTF-8 text only, and abharness does not guess an
//    encoding; the message names the argument and the byte;
//  - a runs root inside the kernel repository's work tree that git does not ignore: the run
//    directories would become untracked files of every WORKTREE identity. abharness never writes
//    into the user's repository (not even a .gitignore); the message says what to add.
void check_run_inputs(const PlanRequest& req, const ResolvedRequest& resolved,
                      const std::filesystem::path& runs_root);
// Now, in UTC, ISO 8601 (e.g. 2026-11-29T12:00:00Z).
std::string utc_timestamp();

// Whether a variant of the plan runs on a GPU (as its built plugin declares itself).
bool any_cuda(const Plan& p);

// A fresh run id: the UTC time and a random suffix, e.g. 20261129-120000-3fa9c1.
std::string new_run_id();

// Creates runs_root/<id>, choosing `id` when it is empty; a directory that exists is never reused
// (UsageError pointing at resume).
std::filesystem::path create_run_dir(const std::filesystem::path& runs_root, std::string& id);

// The GPU selectors of --gpus; UsageError when it names none.
std::vector<std::string> split_gpus(const std::string& gpus);

// The machine a plan is for, as a worker sees it: one entry per GPU for CUDA plugins, the host for
// CPU plugins. `scratch` receives the probes' output.
std::vector<Environment> probe_machine(const std::filesystem::path& worker, bool cuda,
                                       const std::vector<std::string>& gpus,
                                       const std::filesystem::path& scratch);

// Builds both variants inside `run_dir` (reusing cached builds under `cache_root`), probes the
// machine, orders the arms and writes plan.json. The directory must exist and be locked. The dry
// run of the built plugins (dry_run.hpp) is the caller's: `run` does it while the first workers
// load (cmd_run.cpp), and keeps the directory only once it passed.
Plan make_plan(const PlanRequest& req, const ResolvedRequest& resolved, const std::string& run_id,
               const std::filesystem::path& run_dir, const std::filesystem::path& worker,
               const std::filesystem::path& cache_root);

// How many workers a lane starts ahead for --start-ahead `value`: a number from 0 to 16, or auto:
// none for CPU plugins (their arms time the host that a waiting worker would share), one for a
// GPU plugin in C++ (its start-up, 0.1 s, is far shorter than an arm), eight for a GPU plugin in
// Python (importing torch, 3.7 s, takes several arms' time: an arm after its turn takes about
// 0.5 s). UsageError naming the flag otherwise.
int resolve_start_ahead(const std::string& value, bool cuda, bool python);

// Reads --until-decided into the request's schedule: a number from 0 (until_decided), or auto
// (until_decided_auto; the number is chosen by make_plan). UsageError naming the flag otherwise.
void set_until_decided(PlanRequest& req);
// The conditional blocks `--until-decided auto` plans: 3 (whole arms of one build differ by
// percents on a shared CPU, and by 0.2-0.7 % between processes of a microsecond GPU kernel, where
// one extra block decides about half of an A/A's shapes and three nearly all,
// docs/statistics.md#adaptive-rounds---until-decided); none with a launcher that cannot run them
// between rounds; never more than `cap` (ResolvedRequest::auto_blocks_cap). Only undecided or
// one-arm shapes run them, and not those that all three could not decide (futility).
int auto_until_decided(bool launcher_runs_them, int cap);

// `run --resume` with flags (same_sweep.cpp): they must describe the plan's sweep, or they would be
// ignored. Compared with the plan: the measurement settings, the revisions as typed, --repo,
// --target, the schedule (--schedule, --rounds, --schedule-seed, --until-decided), the launcher
// options, --start-ahead, and when given --shapes (the plan's patterns), --grid (filtered by the
// plan's patterns), --python, --cpus (the placement they make) and
// for a CUDA plan --gpus (resolved through `worker`). Throws UsageError naming the flag, the
// value given and the plan's.
void check_same_sweep(const std::filesystem::path& run_dir, const Plan& plan,
                      const PlanRequest& requested, const std::filesystem::path& worker);

// Refuses (UsageError) when the worker binary or a plugin is not the file the plan hashed.
void check_binaries(const std::filesystem::path& run_dir, const Plan& plan,
                    const std::filesystem::path& worker);

// Refuses (UsageError) when this machine, probed again, differs from the plan's in any field.
void check_local_machine(const std::filesystem::path& run_dir, const Plan& plan,
                         const std::filesystem::path& worker);

// The CPUs arms may use on this machine: those of --cpus `requested` (a list such as 0-3,8), which
// must be allowed to this process, or when it is empty every CPU this process may use. UsageError
// naming --cpus.
std::vector<int> allowed_cpus(const std::string& requested);

// Gives every task the CPUs of its lane on this machine (placement.hpp), from --cpus `cpus` (a
// list such as 0-3,8) or, when empty, every CPU this process may use; UsageError naming --cpus.
// A fallback from the rule is said on stderr and recorded in the plan's placement_notes.
void place_arms_here(Plan& plan, const std::string& cpus);

// Refuses (UsageError) to resume when a CPU the plan placed an arm on may no longer be used here:
// the worker could not be pinned to it.
void check_local_cpus(const std::filesystem::path& run_dir, const Plan& plan);

// Refuses (UsageError) to resume when anything the plan fixed has changed: the worker binary, a
// plugin, a WORKTREE variant's identity, the Python interpreter, or the machine and the CPUs the
// plan placed arms on (as its launcher can tell).
void check_resumable(const std::filesystem::path& run_dir, const Plan& plan,
                     const std::filesystem::path& worker);

}  // namespace abh
