// `run --resume` with flags: each flag that decides the plan must describe the plan's sweep, or
// it would be silently ignored (the plan is never edited). planner.hpp lists what is compared.
#include "launcher.hpp"
#include "model/shape_filter.hpp"
#include "model/timing.hpp"
#include "paths.hpp"
#include "placement.hpp"
#include "planner.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/text.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// A flag given to `run --resume` that differs from the plan: the fix is the plan's value, or
// `abharness resume`, which takes everything from the plan.
[[noreturn]] void refuse_flag(const fs::path& run_dir, const std::string& given,
                              const std::string& planned) {
  throw UsageError("cannot resume " + run_dir.string() + ": " + given +
                   " differs from the plan's " + planned +
                   "; give the plan's value, or continue with `abharness resume " +
                   run_dir.string() + "`, which takes every setting from the plan");
}

// The measurement settings (--min-samples, --min-time, --timer, ...) that differ, each as the
// plan's settings field with the value given (or defaulted) and the plan's.
std::string settings_differences(const MeasureSettings& given, const MeasureSettings& planned) {
  const json g = to_json(given), p = to_json(planned);
  std::vector<std::string> out;
  for (const auto& [key, value] : p.items())
    if (!g.contains(key) || g[key] != value)
      out.push_back(key + " " + (g.contains(key) ? g[key].dump() : "unset") + " (the plan's " +
                    value.dump() + ")");
  for (const auto& [key, value] : g.items())
    if (!p.contains(key)) out.push_back(key + " " + value.dump() + " (the plan has none)");
  return join(out, ", ");
}

void check_schedule_flags(const fs::path& run_dir, const Plan& plan, const ScheduleOptions& s) {
  const ScheduleOptions& p = plan.schedule;
  if (s.name != p.name) refuse_flag(run_dir, "--schedule " + s.name, "schedule " + p.name);
  if (s.rounds != p.rounds)
    refuse_flag(run_dir, "--rounds " + std::to_string(s.rounds),
                "rounds " + std::to_string(p.rounds));
  if (s.seed != p.seed)
    refuse_flag(run_dir, "--schedule-seed " + std::to_string(s.seed),
                "seed " + std::to_string(p.seed));
  // auto is what the plan chose by auto, whatever number that was.
  if (s.until_decided_auto ? !p.until_decided_auto : s.until_decided != p.until_decided)
    refuse_flag(run_dir,
                "--until-decided " +
                    (s.until_decided_auto ? std::string("auto") : std::to_string(s.until_decided)),
                "until_decided " + std::to_string(p.until_decided));
  // Without the flag a resume keeps the plan's choice; with it, the plan must have made it.
  if (s.share_host && !p.share_host)
    refuse_flag(run_dir, "--share-host", "host lock held alone (planned without --share-host)");
}

// --cpus, when given: the CPUs it places each lane's arms on must be the plan's.
void check_cpus_flag(const fs::path& run_dir, const Plan& plan, const std::string& cpus) {
  if (cpus.empty() || launcher_places_lanes(plan.launcher)) return;
  const std::vector<LanePlacement> lanes = place_lanes(plan.machine, allowed_cpus(cpus));
  for (const Task& t : plan.tasks) {
    const std::vector<int>& now = lanes.at(static_cast<size_t>(t.gpu)).cpus;
    if (now != t.cpus)
      refuse_flag(run_dir,
                  "--cpus " + cpus + " (arms of lane " + std::to_string(t.gpu) + " on CPU(s) " +
                      format_cpu_list(now) + ")",
                  "placement (CPU(s) " + format_cpu_list(t.cpus) + ")");
  }
}

// --gpus of a CUDA plan run here: the same GPUs, in the same order (an index is resolved to its
// UUID by a probe, as the plan's were).
void check_gpus_flag(const fs::path& run_dir, const Plan& plan, const std::string& gpus,
                     const fs::path& worker) {
  if (gpus.empty() || !any_cuda(plan) || launcher_places_lanes(plan.launcher)) return;
  const std::vector<std::string> given = split_gpus(gpus);
  std::vector<std::string> planned;
  for (const auto& m : plan.machine) planned.push_back(m.gpu ? m.gpu->uuid : "");
  if (given.size() != planned.size())
    refuse_flag(run_dir, "--gpus " + gpus + " (" + std::to_string(given.size()) + " GPUs)",
                std::to_string(planned.size()) + " GPUs (" + join(planned, ",") + ")");
  for (size_t i = 0; i < given.size(); ++i) {
    std::string uuid = given[i];
    if (uuid.rfind("GPU-", 0) != 0) {
      const fs::path scratch = run_dir / "logs" / "probe";
      const auto probed = probe_machine(worker, true, {uuid}, scratch);
      uuid = probed.at(0).gpu ? probed.at(0).gpu->uuid : "";
    }
    if (uuid != planned[i])
      refuse_flag(run_dir, "--gpus " + gpus + " (GPU " + given[i] + " is " + uuid + ")",
                  "GPU " + std::to_string(i) + " " + planned[i]);
  }
}

// --shapes, when given, must be the plan's filter; --grid, when given, filtered by the plan's
// patterns (so --shapes need not be repeated) must give the plan's shapes.
void check_grid_flags(const fs::path& run_dir, const Plan& plan, const PlanRequest& requested) {
  const std::string planned_filter = join(plan.shape_filter, ",");
  if (!requested.shapes.empty() && parse_shape_filter(requested.shapes) != plan.shape_filter)
    refuse_flag(run_dir, "--shapes " + quote(requested.shapes),
                plan.shape_filter.empty() ? "whole grid (no --shapes)"
                                          : "--shapes " + quote(planned_filter));
  if (requested.grid.empty()) return;
  // A shape of a plan written before timings were recorded has none: it timed kernels.
  std::vector<Shape> planned = plan.shapes;
  for (Shape& s : planned) s.timing = shape_timing(s);
  std::vector<Shape> shapes = load_grid(requested.grid).shapes;
  try {
    shapes = filter_shapes(shapes, plan.shape_filter, requested.grid);
  } catch (const UsageError&) {
    shapes.clear();  // a pattern of the plan matches nothing in this grid: it is another grid
  }
  if (expand_timings(shapes, parse_timings(plan.settings.timing)) != planned)
    throw UsageError("cannot resume " + run_dir.string() + ": --grid " + requested.grid +
                     " differs from the plan's shapes" +
                     (plan.shape_filter.empty() ? std::string()
                                                : " (those of its grid matching --shapes " +
                                                      quote(planned_filter) + ")"));
}

// The variants given (--baseline/--candidate or --variants) must be the plan's: names, revisions
// as typed, build and run settings.
void check_variants_flags(const fs::path& run_dir, const Plan& plan, const PlanRequest& requested) {
  // `run --resume DIR` without revisions or a variants file: the plan's variants.
  if (!requested.variants_file && requested.baseline.empty() && requested.candidate.empty()) return;
  const std::vector<VariantSpec> want = requested_variants(requested);
  bool same = want.size() == plan.variants.size();
  for (std::size_t i = 0; same && i < want.size(); ++i) {
    const Variant& v = plan.variants[i];
    same = want[i].name == v.name && want[i].revision == v.source.requested &&
           want[i].build == v.build && want[i].run == v.run;
  }
  if (same) return;
  const auto describe_planned = [&] {
    std::vector<std::string> out;
    for (const Variant& v : plan.variants) out.push_back(v.name + " '" + v.source.requested + "'");
    return join(out, ", ");
  };
  if (plan.variants.size() == 2 && !requested.variants_file && plan.variants[0].build.empty() &&
      plan.variants[0].name == "baseline")
    throw UsageError("cannot resume " + run_dir.string() + ": the plan compares '" +
                     plan.variants[0].source.requested + "' with '" +
                     plan.variants[1].source.requested + "'");
  throw UsageError("cannot resume " + run_dir.string() + ": the plan compares the variants " +
                   describe_planned() +
                   " (with their build and run settings), and the flags give others; resume "
                   "with the same --variants file, or without it");
}

}  // namespace

void check_same_sweep(const fs::path& run_dir, const Plan& plan, const PlanRequest& requested,
                      const fs::path& worker) {
  if (requested.settings != plan.settings)
    throw UsageError("cannot resume " + run_dir.string() +
                     ": the measurement settings given differ from the plan's: " +
                     settings_differences(requested.settings, plan.settings) +
                     " (an option not given counts as its default); give the plan's values, or "
                     "continue with `abharness resume " +
                     run_dir.string() + "`, which takes every setting from the plan");
  check_variants_flags(run_dir, plan, requested);
  // An empty --repo, --target or --gpus was left out: the plan's is meant.
  // Plans made before absolute_dir may end with a separator: compared the same way.
  const fs::path planned = absolute_dir(plan.repo);
  const fs::path repo = requested.repo.empty() ? planned : absolute_dir(requested.repo);
  if (repo != planned) refuse_flag(run_dir, "--repo " + repo.string(), "repository " + plan.repo);
  if (!requested.target.empty() && requested.target != plan.plugin_target)
    refuse_flag(run_dir, "--target " + requested.target, "target " + plan.plugin_target);
  check_schedule_flags(run_dir, plan, requested.schedule);
  if (!requested.python.empty() && plan.python && requested.python != plan.python->requested)
    throw UsageError("cannot resume " + run_dir.string() + ": --python " + requested.python +
                     " differs from the plan's interpreter '" + plan.python->requested + "'");
  if (launcher_named(requested.launcher.name).resolve(requested.launcher, any_cuda(plan)) !=
      plan.launcher)
    throw UsageError("cannot resume " + run_dir.string() + ": the launcher options given differ " +
                     "from the plan's " + to_json(plan.launcher).dump());
  if (resolve_start_ahead(requested.start_ahead, any_cuda(plan), plan.python.has_value()) !=
      plan.schedule.start_ahead)
    throw UsageError("cannot resume " + run_dir.string() + ": --start-ahead " +
                     requested.start_ahead + " differs from the plan's start_ahead " +
                     std::to_string(plan.schedule.start_ahead));
  check_cpus_flag(run_dir, plan, requested.cpus);
  check_gpus_flag(run_dir, plan, requested.gpus, worker);
  check_grid_flags(run_dir, plan, requested);
}

}  // namespace abh
