#include "planner.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <random>
#include <sstream>

#include "git/ignore.hpp"
#include "gpu_presence.hpp"
#include "interpreter_probe.hpp"
#include "launcher.hpp"
#include "model/shape_filter.hpp"
#include "model/timing.hpp"
#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "placement.hpp"
#include "preflight.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/file_lock.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"
#include "system/version.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

std::string utc_stamp(const char* fmt) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

}  // namespace

std::string utc_timestamp() {
  return utc_stamp("%Y-%m-%dT%H:%M:%SZ");
}

bool any_cuda(const Plan& p) {
  for (const auto& v : p.variants)
    if (v.device == "cuda") return true;
  return false;
}

namespace {

// The message every resume refusal shares: what changed, and why that ends the run.
[[noreturn]] void refuse_resume(const fs::path& run_dir, const std::string& what) {
  throw UsageError("cannot resume " + run_dir.string() + ": " + what +
                   "; start a new run instead (results measured under different conditions "
                   "must not be mixed)");
}

// A plugin missing or changed: when the build cache still holds the bytes the plan hashed, the
// fix is to restore them, which loses nothing measured; else the run cannot go on.
[[noreturn]] void refuse_plugin(const fs::path& run_dir, const Variant& v,
                                const std::string& what) {
  if (const std::string advice = restore_advice(run_dir, v.plugin, v.plugin_sha256);
      !advice.empty())
    throw UsageError("cannot resume " + run_dir.string() + ": " + what + "; " + advice +
                     " and resume again");
  refuse_resume(run_dir, what);
}

// A WORKTREE variant's sources must still have the planned identity.
void check_sources(const fs::path& run_dir, const Plan& plan) {
  for (const auto& v : plan.variants) {
    if (v.source.kind != "worktree") continue;
    SourceIdentity now = compute_source_identity(plan.repo, v.source.requested);
    if (now.digest != v.source.digest)
      refuse_resume(run_dir, "the working tree of " + plan.repo + " changed since the plan (" +
                                 v.name + " identity " + v.source.digest.substr(0, 12) + ", now " +
                                 now.digest.substr(0, 12) + ")");
  }
}

}  // namespace

void check_binaries(const fs::path& run_dir, const Plan& plan, const fs::path& worker) {
  std::string w =
      worker_protocol::worker_digest(worker_protocol::worker_files(worker.parent_path()));
  if (w != plan.worker_sha256)
    refuse_resume(run_dir, "the worker binary changed since the plan (plan " +
                               plan.worker_sha256.substr(0, 12) + ", now " + w.substr(0, 12) + ")");
  for (const auto& v : plan.variants) {
    const RunDirFs run(run_dir);
    if (run.kind(v.plugin) == RunDirFs::Kind::absent)
      refuse_plugin(run_dir, v, "the " + v.name + " plugin " + v.plugin + " is missing");
    std::string h = plugin_digest(run_dir, v);
    if (h != v.plugin_sha256)
      refuse_plugin(run_dir, v,
                    "the " + v.name + " plugin " + v.plugin + " changed (plan " +
                        v.plugin_sha256.substr(0, 12) + ", now " + h.substr(0, 12) + ")");
  }
}

void check_local_machine(const fs::path& run_dir, const Plan& plan, const fs::path& worker) {
  std::vector<std::string> gpus;
  for (const auto& m : plan.machine)
    if (m.gpu) gpus.push_back(m.gpu->uuid);
  RunDirFs(run_dir).make_dirs("logs/probe");
  auto now = probe_machine(worker, any_cuda(plan), gpus, run_dir / "logs" / "probe");
  for (size_t i = 0; i < plan.machine.size(); ++i) {
    json a = to_json(plan.machine[i]), b = to_json(now.at(i));
    for (auto it = a.begin(); it != a.end(); ++it)
      if (b[it.key()] != *it)
        refuse_resume(run_dir, "the machine differs from the plan: " + it.key() + " was " +
                                   it->dump() + ", now " + b[it.key()].dump());
  }
}

std::vector<int> allowed_cpus(const std::string& requested) {
  const std::vector<int> allowed = thread_affinity();
  if (requested.empty()) return allowed;
  std::vector<int> cpus = parse_cpu_list(requested, "--cpus");
  for (int c : cpus)
    if (!std::binary_search(allowed.begin(), allowed.end(), c))
      throw UsageError("--cpus " + requested + ": CPU " + std::to_string(c) +
                       " is not allowed to this process (allowed: " + format_cpu_list(allowed) +
                       ")");
  return cpus;
}

namespace {

// Every task gets its lane's CPUs (placement.hpp); a fallback is said on stderr and in the plan.
void place_arms(Plan& plan, const std::vector<int>& allowed) {
  const std::vector<LanePlacement> lanes = place_lanes(plan.machine, allowed);
  for (auto& t : plan.tasks) t.cpus = lanes.at(static_cast<size_t>(t.gpu)).cpus;
  for (const auto& l : lanes)
    if (!l.note.empty()) {
      std::cerr << "placement: " << l.note << "\n";
      plan.placement_notes.push_back(l.note);
    }
}

}  // namespace

void place_arms_here(Plan& plan, const std::string& cpus) {
  place_arms(plan, allowed_cpus(cpus));
}

void check_local_cpus(const fs::path& run_dir, const Plan& plan) {
  const std::vector<int> allowed = thread_affinity();
  for (const auto& t : plan.tasks)
    for (int c : t.cpus)
      if (!std::binary_search(allowed.begin(), allowed.end(), c))
        refuse_resume(run_dir, "the plan places arms on CPU " + std::to_string(c) +
                                   ", which this process may not use (allowed: " +
                                   format_cpu_list(allowed) + ")");
}

ResolvedRequest resolve_request(const PlanRequest& req) {
  check_options(req);
  ResolvedRequest r;
  r.grid = load_grid(req.grid);
  r.grid.shapes = filter_shapes(r.grid.shapes, parse_shape_filter(req.shapes), req.grid);
  r.auto_blocks_cap = check_schedule(req, r.grid.shapes);
  r.repo = absolute_dir(req.repo);
  if (!fs::exists(r.repo)) throw UsageError("--repo " + r.repo.string() + " does not exist");
  // A revision that cannot be resolved is the user's to fix: a usage error naming the flag.
  auto resolve = [&](const std::string& flag, const std::string& rev) {
    try {
      return compute_source_identity(r.repo, rev);
    } catch (const std::exception& e) {
      throw UsageError(flag + ": " + e.what());
    }
  };
  for (const VariantSpec& v : requested_variants(req)) {
    const std::string flag = req.variants_file ? "--variants " + req.variants_path + ": variant " +
                                                     v.name + ": field 'revision'"
                                               : "--" + v.name;
    r.variants.push_back({v, resolve(flag, v.revision)});
  }
  return r;
}

std::vector<std::string> run_settings_replacing_params(const ResolvedRequest& resolved) {
  std::vector<std::string> notes;
  for (const ResolvedVariant& v : resolved.variants)
    for (const auto& [name, value] : v.spec.run.items()) {
      std::vector<std::string> changed;
      for (const Shape& s : resolved.grid.shapes)
        if (s.params.contains(name) && s.params[name] != value)
          changed.push_back(s.id + " (" + s.params[name].dump() + ")");
      if (changed.empty()) continue;
      const std::size_t shown = std::min<std::size_t>(changed.size(), 3);
      notes.push_back(
          "variant " + v.spec.name + "'s run setting " + name + " = " + value.dump() +
          " replaces the grid's " + name + " in " + std::to_string(changed.size()) + " shape(s): " +
          join(std::vector<std::string>(changed.begin(), changed.begin() + shown), ", ") +
          (changed.size() > shown ? ", ..." : "") + "; its arms of those shapes " +
          "measure another problem than the shape's id says");
    }
  return notes;
}

std::vector<VariantSpec> requested_variants(const PlanRequest& req) {
  return ordered_variants(req.variants_file ? *req.variants_file
                                            : two_variant_file(req.baseline, req.candidate));
}

std::vector<std::string> variant_names(const std::vector<VariantSpec>& variants) {
  std::vector<std::string> names;
  for (const auto& v : variants) names.push_back(v.name);
  return names;
}

namespace {

// "--runs-root" for "--runs-root=x" or the item after "--runs-root"; empty for the rest.
std::string flag_of(const std::vector<std::string>& argv, size_t i) {
  const std::string& a = argv[i];
  if (a.rfind("--", 0) == 0) return a.substr(0, a.find('='));
  if (i > 0 && argv[i - 1].rfind("--", 0) == 0 && argv[i - 1].find('=') == std::string::npos)
    return argv[i - 1];
  return "";
}

void check_utf8(const std::string& text, const std::string& what) {
  const size_t bad = invalid_utf8_at(text);
  if (bad == std::string::npos) return;
  throw UsageError(what + " " + quote(text) + " is not UTF-8 (byte " + std::to_string(bad) +
                   "): the plan and every result record it as JSON text, which must be UTF-8; "
                   "rename it (or use a path without that byte: a symbolic link works)");
}

}  // namespace

void check_run_inputs(const PlanRequest& req, const ResolvedRequest& resolved,
                      const fs::path& runs_root) {
  for (size_t i = 0; i < req.argv.size(); ++i) {
    const std::string flag = flag_of(req.argv, i);
    check_utf8(req.argv[i],
               flag.empty() ? "argument " + std::to_string(i) : "the argument of " + flag);
  }
  check_utf8(resolved.repo.string(), "--repo: the repository path");
  check_utf8(runs_root.string(), "--runs-root: the runs root");
  if (auto wt = visible_to_git(resolved.repo, runs_root))
    throw UsageError("--runs-root " + quote(runs_root.string()) +
                     " is inside the work tree of the kernel repository " + quote(wt->string()) +
                     " and git does not ignore it: every run directory would become untracked "
                     "files of a WORKTREE identity, and abharness never writes into your "
                     "repository; add it to .gitignore (e.g. `echo " +
                     printable(fs::weakly_canonical(runs_root).lexically_relative(*wt).string()) +
                     "/ >> " + printable((*wt / ".gitignore").string()) +
                     "`) or use a runs root outside the repository");
}

std::string new_run_id() {
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", rd() & 0xffffff);
  return utc_stamp("%Y%m%d-%H%M%S-") + suffix;
}

fs::path create_run_dir(const fs::path& runs_root, std::string& id) {
  if (id.empty()) id = new_run_id();
  try {
    check_safe_name(id, "--run-id");
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());  // a flag's value: exit 2, as docs/exit-codes.md says
  }
  const fs::path run_dir = runs_root / id;
  if (fs::exists(fs::symlink_status(run_dir))) {
    if (fs::exists(fs::symlink_status(plan_path(run_dir))))
      throw UsageError("run directory " + run_dir.string() +
                       " already exists: use `abharness resume " + run_dir.string() +
                       "` to continue it, or another --run-id");
    if (FileLock::held_elsewhere(RunDirFs(run_dir), ".lock"))
      throw UsageError("run directory " + run_dir.string() +
                       " already exists: another abharness is starting that run now (its plan "
                       "is not written yet); give another --run-id, or wait for it and then "
                       "`abharness resume " +
                       run_dir.string() + "` if it stops");
    throw UsageError("run directory " + run_dir.string() +
                     " already exists and holds no plan (a start that failed or was stopped "
                     "before its plan was written: nothing in it was measured, and resume cannot "
                     "continue it): remove it (rm -r " +
                     quote(run_dir.string()) + ") or give another --run-id");
  }
  fs::create_directories(runs_root);
  // create_directory, not create_directories: a run directory is always new, never one that
  // appeared between the check above and here.
  if (!fs::create_directory(run_dir))
    throw UsageError("run directory " + run_dir.string() + " already exists: use another --run-id");
  return run_dir;
}

std::vector<std::string> split_gpus(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  if (out.empty()) throw UsageError("--gpus '" + s + "': give GPU indices or UUIDs, e.g. 0,1");
  return out;
}

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

namespace {

// The plan's header: which abharness made it, when, from which command and repository.
Plan plan_header(const PlanRequest& req, const ResolvedRequest& resolved, const std::string& run_id,
                 const fs::path& worker) {
  Plan plan;
  plan.schema_version = kPlanSchemaVersion;
  plan.harness_version = kHarnessVersion;
  plan.run_id = run_id;
  plan.run_nonce = new_run_nonce();
  plan.created_at = utc_timestamp();
  plan.repo = resolved.repo.string();
  plan.plugin_target = req.target;
  plan.command = req.argv;
  plan.shape_filter = parse_shape_filter(req.shapes);
  plan.worker_sha256 =
      worker_protocol::worker_digest(worker_protocol::worker_files(worker.parent_path()));
  return plan;
}

// Both variants materialized and their recipes read first; then, before anything is built, the
// GPUs of --gpus are probed when a recipe already says its plugin needs one; then each variant is
// built and described, and the GPUs probed after the first build that turns out to need one,
// before the next. A launcher that places lanes probes its GPUs on their nodes instead.
std::vector<Variant> prepare_variants(const PlanRequest& req, const ResolvedRequest& resolved,
                                      const fs::path& run_dir, const fs::path& worker,
                                      const fs::path& cache_root) {
  std::vector<MaterializedVariant> sources;
  for (const ResolvedVariant& v : resolved.variants)
    sources.push_back(materialize_variant(
        resolved.repo, VariantRequest{v.spec.name, v.source, req.target, v.spec.build, v.spec.run},
        run_dir, std::cerr));
  bool gpu_checked = launcher_places_lanes(req.launcher);
  const auto need_gpu = [&](const Variant& v, const std::string& why, const std::string& fix) {
    if (gpu_checked) return;
    RunDirFs(run_dir).make_dirs("logs/probe");
    check_gpus_here(worker, split_gpus(req.gpus), run_dir / "logs" / "probe",
                    "the " + v.name + " plugin (target '" + req.target + "') " + why, fix);
    gpu_checked = true;
  };
  const std::optional<std::string> gpu_timing = first_gpu_timing(req.settings.timing);
  for (const auto& m : sources) {
    const Variant& v = m.variant;
    if (auto why = gpu_reason_before_build(v.recipe))
      need_gpu(v, *why, plugin_gpu_fix(v.is_python()));
    else if (gpu_timing && v.is_python())  // declared "device": "cpu"
      refuse_cpu_timing(req.settings.timing, *gpu_timing, v, req.target);
    else if (gpu_timing)
      need_gpu(v,
               "is asked for timing '" + *gpu_timing + "' (--timing " + req.settings.timing +
                   "), which times GPU work",
               "use --timing kernel");
  }
  std::vector<Variant> built;
  for (auto& m : sources) {
    built.push_back(build_variant_in_run(std::move(m), run_dir, cache_root, worker, std::cerr));
    if (built.back().device == "cuda")
      need_gpu(built.back(), "is a CUDA plugin (as built)", plugin_gpu_fix(false));
  }
  return built;
}

}  // namespace

Plan make_plan(const PlanRequest& req, const ResolvedRequest& resolved, const std::string& run_id,
               const fs::path& run_dir, const fs::path& worker, const fs::path& cache_root) {
  Plan plan = plan_header(req, resolved, run_id, worker);
  plan.variants = prepare_variants(req, resolved, run_dir, worker, cache_root);
  if (std::any_of(plan.variants.begin(), plan.variants.end(),
                  [](const Variant& v) { return v.is_python(); })) {
    plan.python = describe_interpreter(requested_interpreter(req.python, plan.variants),
                                       python_front_end(worker), run_dir / "logs" / "probe");
    std::cerr << "python: " << plan.python->executable << " " << plan.python->version << " ("
              << plan.python->distributions.size() << " distributions, digest "
              << plan.python->distributions_sha256.substr(0, 12) << ")\n";
  }
  plan.shapes = expand_timings(resolved.grid.shapes, parse_timings(req.settings.timing));
  plan.settings = req.settings;
  refuse_cpu_timings(plan);
  auto gpus = split_gpus(req.gpus);
  const bool cuda = any_cuda(plan);
  const Launcher& launcher = launcher_named(req.launcher.name);
  plan.launcher = launcher.resolve(req.launcher, cuda);
  plan.schedule = req.schedule;
  plan.schedule.gpus = launcher.lanes(plan.launcher, cuda, gpus.size());
  plan.schedule.start_ahead = resolve_start_ahead(req.start_ahead, cuda, plan.python.has_value());
  if (plan.schedule.until_decided_auto) {
    const int wanted = auto_until_decided(launcher.runs_until_decided(), 3);
    plan.schedule.until_decided =
        auto_until_decided(launcher.runs_until_decided(), resolved.auto_blocks_cap);
    // Said, not silent: a grid too large for auto's blocks gets fewer than the plugin's default.
    if (plan.schedule.until_decided < wanted)
      std::cerr << "--until-decided auto: " << plan.schedule.until_decided
                << " extra block(s) per shape instead of " << wanted
                << ": more would make plan.json larger than " << (kAutoPlanBytes >> 20)
                << " MiB with this grid (give a number to choose)\n";
  }
  // Every plan made now confirms one-arm verdicts when it has conditional blocks to do it with.
  plan.schedule.confirm = true;
  // ... and gives no block to a shape that all its blocks left could not decide.
  plan.schedule.futility = true;
  plan.tasks = make_schedule(plan.shapes, plan.schedule, variant_names(requested_variants(req)));
  RunDirFs(run_dir).make_dirs("logs/probe");
  plan.machine = launcher.probe({plan.launcher, cuda, gpus, run_dir, worker, run_id});
  launcher.place(plan, req.cpus);
  // Written once, before any arm runs; never edited afterwards. The plan is not read back: its
  // JSON mapping is exact both ways (tests/unit/test_plan.cpp), and reading back the 34 MB plan
  // of 50,000 shapes took 2.4 s before the first arm could start. Workers and every later command
  // read the file, and results bind to the digest of the bytes written.
  plan.file_sha256 = write_plan(run_dir, plan);
  return plan;
}

void set_until_decided(PlanRequest& req) {
  ScheduleOptions& s = req.schedule;
  s.until_decided_auto = req.until_decided == "auto";
  if (s.until_decided_auto) {
    s.until_decided = 0;
    return;
  }
  const std::string& v = req.until_decided;
  if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError("--until-decided " + v +
                     ": give the most extra blocks a shape may get (0 for none), or auto");
  s.until_decided = std::stoi(v);
}

int auto_until_decided(bool launcher_runs_them, int cap) {
  if (!launcher_runs_them) return 0;
  return std::max(0, std::min(3, cap));
}

int resolve_start_ahead(const std::string& value, bool cuda, bool python) {
  if (value == "auto") return !cuda ? 0 : python ? 8 : 1;
  if (value.size() <= 2 && !value.empty() &&
      value.find_first_not_of("0123456789") == std::string::npos && std::stoi(value) <= 16)
    return std::stoi(value);
  throw UsageError("--start-ahead " + value +
                   ": use the number of workers a lane starts ahead (0 to 16), or auto");
}

void check_resumable(const fs::path& run_dir, const Plan& plan, const fs::path& worker) {
  check_binaries(run_dir, plan, worker);
  check_sources(run_dir, plan);
  if (plan.python) {
    const std::string changes =
        interpreter_changes(*plan.python, python_front_end(worker), run_dir / "logs" / "probe");
    if (!changes.empty())
      refuse_resume(run_dir, "the Python interpreter changed since the plan (" + changes + ")");
  }
  launcher_named(plan.launcher.name).check_machine(run_dir, plan, worker);
}

}  // namespace abh
