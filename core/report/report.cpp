#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "system/error.hpp"
#include "model/model_grid.hpp"
#include "system/version.hpp"

namespace abh {

namespace {

// --- Building ----------------------------------------------------------------------------------

// Why a result cannot be used as a measurement, or "" when it can.
std::string unusable_reason(const ArmResult& r) {
  if (!r.correctness.passed)
    return "output verification failed (max relative error " +
           std::to_string(r.correctness.max_rel_error) + ", tolerance " +
           std::to_string(r.correctness.tolerance) + ")";
  const auto& s = r.measurement.samples_ns;
  if (s.empty()) return "result has no samples";
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!(s[i] > 0) || !std::isfinite(s[i]))
      return "sample " + std::to_string(i) + " is " + std::to_string(s[i]) +
             " ns: times must be positive and finite";
  return "";
}

// flops / ns = GFLOP/s; bytes / ns = GB/s, at the arm's (possibly clock-normalized) median.
void set_rates(ArmStats& a, const Measurement& m) {
  if (m.flops > 0) a.tflops = m.flops / a.median_ns / 1e3;
  if (m.min_bytes > 0) a.gbps = m.min_bytes / a.median_ns;
}

// Every sample of a valid GPU arm has its clock: the shape can be compared at one clock.
bool clocked(const ArmResult& r) {
  const auto& m = r.measurement;
  return !m.clock.sample_mhz.empty() && m.clock.sample_mhz.size() == m.samples_ns.size();
}

ArmStats arm_stats(const Task& t, const ArmOutcome* o) {
  ArmStats a;
  a.arm = t.arm;
  a.variant = t.variant;
  a.round = t.round;
  if (!o) {
    a.failure = "no outcome (the arm was not run)";
    return a;
  }
  if (o->result) {
    // Flagged even when the arm failed for another reason: the reader should know both.
    a.throttled = o->result->telemetry.throttled;
    a.throttle_note = o->result->telemetry.note;
  }
  if (!o->result) {
    a.failure = o->failure.empty() ? "no result and no recorded reason" : o->failure;
    return a;
  }
  const ArmResult& r = *o->result;
  if (std::string why = unusable_reason(r); !why.empty()) {
    a.failure = why;
    return a;
  }
  const Measurement& m = r.measurement;
  std::vector<double> copy = m.samples_ns;
  a.ok = true;
  a.median_ns = median_in_place(copy);
  a.raw_median_ns = a.median_ns;
  a.min_ns = *std::min_element(m.samples_ns.begin(), m.samples_ns.end());
  // The worker's own robust noise (1.4826 * MAD / median), so the column agrees with the
  // stop reason it recorded.
  a.noise = m.noise;
  a.samples = m.samples_ns.size();
  a.timer = m.timer;
  a.stop_reason = m.stop_reason;
  a.kernel_names = m.kernel_names;
  a.tactic = m.tactic;
  if (!m.clock.sample_mhz.empty()) {
    std::vector<double> mhz = m.clock.sample_mhz;
    a.median_mhz = median_in_place(mhz);
  }
  set_rates(a, m);
  return a;
}

using ArmKey = std::pair<std::string, std::string>;  // (shape, arm)

std::map<ArmKey, const ArmOutcome*> index_outcomes(const Plan& plan,
                                                   const std::vector<ArmOutcome>& outcomes) {
  std::map<ArmKey, const ArmOutcome*> by_arm;
  for (const auto& o : outcomes) {
    const Task* planned = plan.find_task(o.task.shape, o.task.arm);
    if (!planned || !(*planned == o.task))
      throw Error("report: outcome for " + o.task.shape + "/" + o.task.arm +
                  " is not a task of plan " + plan.run_id +
                  ": validate the run directory (abharness verify) before reporting");
    if (!by_arm.emplace(ArmKey{o.task.shape, o.task.arm}, &o).second)
      throw Error("report: two outcomes for " + o.task.shape + "/" + o.task.arm);
  }
  return by_arm;
}

// The candidate's median clock against the baseline's, when every arm recorded its clocks.
void clock_gap(ShapeRow& row) {
  double a = 0, b = 0;
  int na = 0, nb = 0;
  for (const ArmStats& arm : row.arms) {
    if (!arm.median_mhz) return;
    (arm.variant == "baseline" ? a : b) += *arm.median_mhz;
    ++(arm.variant == "baseline" ? na : nb);
  }
  if (na > 0 && nb > 0) row.clock_gap = (b / nb) / (a / na) - 1;
}

// Fills the row's speedup, interval, drift and verdict from its (all valid) arms.
RatioEstimate compare(ShapeRow& row, const std::vector<std::vector<double>>& a_samples,
                      const std::vector<std::vector<double>>& b_samples, const StatsOptions& opt) {
  RatioEstimate e = bootstrap_ratio(a_samples, b_samples, opt, stream_seed(opt.seed, row.shape));
  row.baseline_ns = e.baseline_ns;
  row.candidate_ns = e.candidate_ns;
  row.speedup = e.ratio;
  row.ci = e.ci;
  const ArmStats *first_a = nullptr, *last_a = nullptr;
  for (const auto& a : row.arms) {
    if (a.variant != "baseline") continue;
    if (!first_a)
      first_a = &a;
    else
      last_a = &a;
  }
  if (first_a && last_a) row.drift = last_a->median_ns / first_a->median_ns;
  row.verdict = classify(e.ci, row.drift, opt.noise_band);
  return e;
}

ShapeRow shape_row(const Plan& plan, const Shape& shape,
                   const std::map<ArmKey, const ArmOutcome*>& outcomes, const StatsOptions& opt,
                   std::optional<RatioEstimate>& estimate) {
  ShapeRow row;
  row.shape = shape.id;
  row.label = shape.label;
  std::vector<std::vector<double>> a_samples, b_samples;
  std::vector<const Measurement*> measured;  // beside row.arms, for the valid arms
  std::string failures;
  bool all_clocked = true;
  for (const Task& t : plan.tasks) {
    if (t.shape != shape.id) continue;
    auto it = outcomes.find({t.shape, t.arm});
    ArmStats a = arm_stats(t, it == outcomes.end() ? nullptr : it->second);
    if (a.throttled) row.throttled_arms.push_back(a.arm);
    if (!a.ok) failures += (failures.empty() ? "" : "; ") + a.arm + ": " + a.failure;
    measured.push_back(a.ok ? &it->second->result->measurement : nullptr);
    if (a.ok) all_clocked = all_clocked && clocked(*it->second->result);
    row.arms.push_back(std::move(a));
  }
  if (failures.empty() && !row.arms.empty()) clock_gap(row);
  // At one clock: each arm's samples moved along its own fitted line to the shape's reference
  // clock (statistics.hpp); the medians, the interval and the drift are then all at that clock.
  const bool normalize = opt.clock_normalize && all_clocked && failures.empty();
  if (normalize) {
    std::vector<double> pooled;
    for (const Measurement* m : measured)
      pooled.insert(pooled.end(), m->clock.sample_mhz.begin(), m->clock.sample_mhz.end());
    row.reference_mhz = median_in_place(pooled);
  }
  for (std::size_t i = 0; i < row.arms.size(); ++i) {
    ArmStats& a = row.arms[i];
    if (!a.ok) continue;
    const Measurement& m = *measured[i];
    std::vector<double> samples = m.samples_ns;
    if (normalize) {
      a.clock_slope = clock_slope(m.samples_ns, m.clock.sample_mhz);
      samples =
          clock_adjusted(m.samples_ns, m.clock.sample_mhz, *a.clock_slope, *row.reference_mhz);
      std::vector<double> copy = samples;
      a.median_ns = median_in_place(copy);
      set_rates(a, m);
    }
    (a.variant == "baseline" ? a_samples : b_samples).push_back(std::move(samples));
  }
  if (row.arms.empty()) failures = "the plan has no arms for this shape";
  if (failures.empty() && (a_samples.empty() || b_samples.empty()))
    failures = "the schedule has no baseline or no candidate arm for this shape";
  if (!failures.empty()) {
    row.verdict = Verdict::failed;
    row.failure = failures;
    return row;
  }
  estimate = compare(row, a_samples, b_samples, opt);
  return row;
}

Summary summarize(const std::vector<ShapeRow>& rows,
                  const std::vector<const RatioEstimate*>& estimates, const StatsOptions& opt) {
  Summary s;
  for (Verdict v : all_verdicts()) s.verdicts[to_string(v)] = 0;
  s.shapes_total = static_cast<int>(rows.size());
  for (const auto& row : rows) {
    ++s.verdicts[to_string(row.verdict)];
    if (!row.throttled_arms.empty()) ++s.shapes_throttled;
    if (!row.speedup) continue;
    if (!s.min_speedup || *row.speedup < s.min_speedup->speedup)
      s.min_speedup = Extreme{row.shape, *row.speedup};
    if (!s.max_speedup || *row.speedup > s.max_speedup->speedup)
      s.max_speedup = Extreme{row.shape, *row.speedup};
  }
  s.shapes_failed = s.verdicts["failed"];
  s.shapes_compared = s.shapes_total - s.shapes_failed;
  s.improved = s.verdicts["faster"];
  s.regressed = s.verdicts["slower"];
  if (estimates.empty()) return s;
  AggregateEstimate a = aggregate(estimates, opt);
  s.geomean = a.geomean;
  s.geomean_ci = a.geomean_ci;
  s.geomean_verdict = classify(a.geomean_ci, std::nullopt, opt.noise_band);
  s.baseline_total_ns = a.baseline_total_ns;
  s.candidate_total_ns = a.candidate_total_ns;
  s.summed_time_ratio = a.summed_ratio;
  s.summed_time_ratio_ci = a.summed_ratio_ci;
  return s;
}

// --- Speed of light ----------------------------------------------------------------------------

// Reasons a shape has no speed-of-light time, each kept once with the shapes it applies to, in
// first-seen (plan) order so the report is deterministic.
class SolNotes {
 public:
  void add(const std::string& reason) {
    for (auto& [r, n] : reasons_)
      if (r == reason) {
        ++n;
        return;
      }
    reasons_.emplace_back(reason, 1);
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& [r, n] : reasons_)
      out.push_back(r + " (" + std::to_string(n) + (n == 1 ? " shape)" : " shapes)"));
    return out;
  }

 private:
  std::vector<std::pair<std::string, int>> reasons_;
};

std::optional<std::int64_t> positive_int(const json& params, const char* key) {
  auto it = params.find(key);
  if (it == params.end() || !it->is_number_integer()) return std::nullopt;
  auto v = it->get<std::int64_t>();
  if (v <= 0) return std::nullopt;
  return v;
}

// The speed-of-light time of one shape, or (in `why`) the reason it has none. `gpu` receives the
// table entry used.
std::optional<RooflineResult> shape_sol(const Plan& plan, const Shape& shape,
                                        const RooflineContext& ctx, const RooflineOptions& opt,
                                        std::string& why, std::string& gpu) {
  const Task* task = nullptr;
  for (const auto& t : plan.tasks)
    if (t.shape == shape.id) {
      task = &t;
      break;
    }
  if (!task) {
    why = "the plan has no arms for the shape";
    return std::nullopt;
  }
  if (task->gpu < 0 || static_cast<std::size_t>(task->gpu) >= plan.machine.size()) {
    why = "the plan has no machine entry for GPU index " + std::to_string(task->gpu);
    return std::nullopt;
  }
  const Environment& env = plan.machine[static_cast<std::size_t>(task->gpu)];
  if (!env.gpu) {
    why = "CPU run, no GPU spec";
    return std::nullopt;
  }
  if (!ctx.table) {
    why = ctx.table_error.empty() ? "no GPU table was given to the report"
                                  : "GPU table not loaded: " + ctx.table_error;
    return std::nullopt;
  }
  const GpuSpec* spec = nullptr;
  for (const auto& g : ctx.table->gpus)
    if (g.name == env.gpu->name) spec = &g;
  if (!spec) {
    why = "GPU '" + env.gpu->name + "' not in " + ctx.table->origin +
          " (add its datasheet figures there)";
    return std::nullopt;
  }
  if (!shape.params.is_object() || !positive_int(shape.params, "m") ||
      !positive_int(shape.params, "n") || !positive_int(shape.params, "k")) {
    why = "params have no positive integer m, n, k (not a GEMM shape)";
    return std::nullopt;
  }
  // No guess: a plain {m, n, k} shape may be an fp32 kernel (the CUDA example is), and a bf16
  // speed-of-light would flatter it several times over.
  Shape gemm = shape;
  if (!gemm.params.contains("precision")) {
    why = "params name no precision (add \"precision\" to the grid for a speed-of-light)";
    return std::nullopt;
  }
  if (!gemm.params["precision"].is_string()) {
    why = "params.precision is not a string";
    return std::nullopt;
  }
  const std::string precision = gemm.params["precision"].get<std::string>();
  std::string recipe;
  try {
    recipe = recipe_of(precision);
  } catch (const Error&) {
    why = "unknown GEMM precision '" + precision + "'";
    return std::nullopt;
  }
  if (std::find(spec->precisions.begin(), spec->precisions.end(), recipe) ==
      spec->precisions.end()) {
    why = spec->name + " does not run " + precision + " natively";
    return std::nullopt;
  }
  try {
    RooflineResult r = roofline(gemm, *spec, opt);
    gpu = spec->name;
    return r;
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
}

// Sets every row's speed-of-light time and each arm's fraction of it.
SpeedOfLight add_speed_of_light(const Plan& plan, const RooflineContext& ctx,
                                std::vector<ShapeRow>& rows) {
  SpeedOfLight sol;
  SolNotes notes;
  RooflineOptions opt;
  if (ctx.table) {
    sol.table = ctx.table->origin;
    opt = default_roofline_options(*ctx.table);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string why, gpu;
    auto r = shape_sol(plan, plan.shapes[i], ctx, opt, why, gpu);
    if (!r) {
      notes.add(why);
      continue;
    }
    ShapeRow& row = rows[i];
    row.sol_ns = r->sol_s * 1e9;
    row.sol_bound = r->bound;
    for (auto& a : row.arms)
      if (a.ok) a.sol_fraction = *row.sol_ns / a.median_ns;
    if (row.speedup) {
      row.baseline_sol_fraction = *row.sol_ns / *row.baseline_ns;
      row.candidate_sol_fraction = *row.sol_ns / *row.candidate_ns;
    }
    ++sol.shapes;
    if (std::find(sol.gpus.begin(), sol.gpus.end(), gpu) == sol.gpus.end()) sol.gpus.push_back(gpu);
  }
  std::sort(sol.gpus.begin(), sol.gpus.end());
  sol.notes = notes.lines();
  return sol;
}

// --- Per-layer summary -------------------------------------------------------------------------

// "<qkv|proj|fc1|fc2> <fprop|dgrad|wgrad>", optionally followed by " (...)" (the MoE note):
// the labels model_gemms() writes.
bool model_gemm_label(const std::string& label) {
  auto sp = label.find(' ');
  if (sp == std::string::npos) return false;
  const std::string op = label.substr(0, sp);
  if (op != "qkv" && op != "proj" && op != "fc1" && op != "fc2") return false;
  auto end = label.find(' ', sp + 1);
  const std::string pass = label.substr(sp + 1, end == std::string::npos ? end : end - sp - 1);
  if (pass != "fprop" && pass != "dgrad" && pass != "wgrad") return false;
  if (end == std::string::npos) return true;
  return label.compare(end, 2, " (") == 0 && label.back() == ')';
}

// The precision recipe of a model-grid GEMM, or nothing for any other shape.
std::optional<std::string> model_recipe(const Shape& s) {
  if (!model_gemm_label(s.label) || !s.params.is_object()) return std::nullopt;
  auto it = s.params.find("precision");
  if (it == s.params.end() || !it->is_string()) return std::nullopt;
  try {
    return recipe_of(it->get<std::string>());
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<LayerSummary> layer_summary(const Plan& plan, const std::vector<ShapeRow>& rows) {
  struct Acc {
    PrecisionSum sum;
    int with_sol = 0;
    double sol_ns = 0;
  };
  std::map<std::string, Acc> by_recipe;
  LayerSummary out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto recipe = model_recipe(plan.shapes[i]);
    if (!recipe) {
      ++out.other_shapes;
      continue;
    }
    const ShapeRow& row = rows[i];
    Acc& acc = by_recipe[*recipe];
    PrecisionSum& p = acc.sum;
    p.precision = *recipe;
    ++p.gemms;
    if (row.sol_ns) {
      ++acc.with_sol;
      acc.sol_ns += *row.sol_ns;
    }
    if (!row.speedup) {
      p.missing.push_back(row.shape);
      continue;
    }
    p.baseline_ns = p.baseline_ns.value_or(0) + *row.baseline_ns;
    p.candidate_ns = p.candidate_ns.value_or(0) + *row.candidate_ns;
  }
  if (by_recipe.empty()) return std::nullopt;
  for (auto& [recipe, acc] : by_recipe)
    if (acc.with_sol == acc.sum.gemms) acc.sum.sol_ns = acc.sol_ns;
  const PrecisionSum* bf16 = nullptr;
  if (auto it = by_recipe.find("bf16"); it != by_recipe.end()) bf16 = &it->second.sum;
  for (const auto& recipe : known_precisions()) {
    auto it = by_recipe.find(recipe);
    if (it == by_recipe.end()) continue;
    PrecisionSum p = it->second.sum;
    if (bf16 && bf16->missing.empty() && p.missing.empty() && bf16->baseline_ns) {
      p.baseline_vs_bf16 = *p.baseline_ns / *bf16->baseline_ns;
      p.candidate_vs_bf16 = *p.candidate_ns / *bf16->candidate_ns;
    }
    out.precisions.push_back(std::move(p));
  }
  return out;
}

Provenance provenance(const Plan& plan, const std::string& result_set_digest) {
  Provenance p;
  p.run_id = plan.run_id;
  p.harness_version = plan.harness_version;
  p.created_at = plan.created_at;
  p.repo = plan.repo;
  p.plugin_target = plan.plugin_target;
  p.command = plan.command;
  p.worker_sha256 = plan.worker_sha256;
  p.result_set_digest = result_set_digest;
  for (const auto& v : plan.variants)
    p.variants.push_back({v.name, v.source.requested, v.source.kind, v.source.commit,
                          v.source.digest, v.source.tracked_diff_sha256, v.source.untracked_sha256,
                          v.plugin_sha256, v.toolchain_id});
  p.machine = plan.machine;
  p.settings = plan.settings;
  p.schedule = plan.schedule;
  return p;
}

// --- JSON --------------------------------------------------------------------------------------

json opt_json(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}
json to_json(const Interval& i) {
  return json{{"lo", i.lo}, {"hi", i.hi}};
}
json opt_json(const std::optional<Interval>& v) {
  return v ? to_json(*v) : json(nullptr);
}

const json& member(const json& j, const char* key, const std::string& where) {
  require_object(j, where);
  auto it = j.find(key);
  if (it == j.end()) throw Error(where + ": field '" + key + "' is missing");
  return *it;
}

const json& array_member(const json& j, const char* key, const std::string& where) {
  const json& a = member(j, key, where);
  if (!a.is_array()) throw Error(where + ": field '" + key + "': expected an array");
  return a;
}

std::optional<double> opt_number(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (v.is_null()) return std::nullopt;
  return field<double>(j, key, where);
}

// The optional fields added with speed of light (C10): absent in older report.json files, so a
// missing key reads as absent, like null.
std::optional<double> new_opt_number(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return std::nullopt;
  return opt_number(j, key, where);
}

Interval interval_from_json(const json& j, const std::string& where) {
  return {field<double>(j, "lo", where), field<double>(j, "hi", where)};
}

std::optional<Interval> opt_interval(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (v.is_null()) return std::nullopt;
  return interval_from_json(v, where + "." + key);
}

std::vector<std::string> strings(const json& j, const char* key, const std::string& where) {
  std::vector<std::string> out;
  for (const auto& s : array_member(j, key, where)) {
    if (!s.is_string()) throw Error(where + ": field '" + key + "': expected strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

json to_json(const ArmStats& a) {
  return json{{"arm", a.arm},
              {"variant", a.variant},
              {"round", a.round},
              {"ok", a.ok},
              {"failure", a.failure},
              {"median_ns", a.median_ns},
              {"raw_median_ns", a.raw_median_ns},
              {"min_ns", a.min_ns},
              {"noise", a.noise},
              {"samples", a.samples},
              {"timer", a.timer},
              {"stop_reason", a.stop_reason},
              {"kernel_names", a.kernel_names},
              {"tactic", a.tactic},
              {"tflops", opt_json(a.tflops)},
              {"gbps", opt_json(a.gbps)},
              {"throttled", a.throttled},
              {"throttle_note", a.throttle_note},
              {"sol_fraction", opt_json(a.sol_fraction)},
              {"median_mhz", opt_json(a.median_mhz)},
              {"clock_slope", opt_json(a.clock_slope)}};
}

ArmStats arm_stats_from_json(const json& j, const std::string& w) {
  ArmStats a;
  a.arm = field<std::string>(j, "arm", w);
  a.variant = field<std::string>(j, "variant", w);
  a.round = field<int>(j, "round", w);
  a.ok = field<bool>(j, "ok", w);
  a.failure = field<std::string>(j, "failure", w);
  a.median_ns = field<double>(j, "median_ns", w);
  // Reports written before clock normalization existed compared raw medians.
  a.raw_median_ns =
      j.contains("raw_median_ns") ? field<double>(j, "raw_median_ns", w) : a.median_ns;
  a.min_ns = field<double>(j, "min_ns", w);
  a.noise = field<double>(j, "noise", w);
  a.samples = field<std::uint64_t>(j, "samples", w);
  a.timer = field<std::string>(j, "timer", w);
  a.stop_reason = field<std::string>(j, "stop_reason", w);
  a.kernel_names = strings(j, "kernel_names", w);
  a.tactic = field<std::string>(j, "tactic", w);
  a.tflops = opt_number(j, "tflops", w);
  a.gbps = opt_number(j, "gbps", w);
  a.throttled = field<bool>(j, "throttled", w);
  a.throttle_note = field<std::string>(j, "throttle_note", w);
  a.sol_fraction = new_opt_number(j, "sol_fraction", w);
  a.median_mhz = new_opt_number(j, "median_mhz", w);
  a.clock_slope = new_opt_number(j, "clock_slope", w);
  return a;
}

json to_json(const ShapeRow& r) {
  json arms = json::array();
  for (const auto& a : r.arms) arms.push_back(to_json(a));
  return json{{"shape", r.shape},
              {"label", r.label},
              {"verdict", to_string(r.verdict)},
              {"failure", r.failure},
              {"baseline_ns", opt_json(r.baseline_ns)},
              {"candidate_ns", opt_json(r.candidate_ns)},
              {"speedup", opt_json(r.speedup)},
              {"ci", opt_json(r.ci)},
              {"drift", opt_json(r.drift)},
              {"throttled_arms", r.throttled_arms},
              {"reference_mhz", opt_json(r.reference_mhz)},
              {"clock_gap", opt_json(r.clock_gap)},
              {"arms", arms},
              {"sol_ns", opt_json(r.sol_ns)},
              {"sol_bound", r.sol_bound.empty() ? json() : json(r.sol_bound)},
              {"baseline_sol_fraction", opt_json(r.baseline_sol_fraction)},
              {"candidate_sol_fraction", opt_json(r.candidate_sol_fraction)}};
}

ShapeRow shape_row_from_json(const json& j, const std::string& w) {
  ShapeRow r;
  r.shape = field<std::string>(j, "shape", w);
  r.label = field<std::string>(j, "label", w);
  try {
    r.verdict = verdict_from_string(field<std::string>(j, "verdict", w));
  } catch (const Error&) {
    rethrow_with_context(w + ": field 'verdict'");
  }
  r.failure = field<std::string>(j, "failure", w);
  r.baseline_ns = opt_number(j, "baseline_ns", w);
  r.candidate_ns = opt_number(j, "candidate_ns", w);
  r.speedup = opt_number(j, "speedup", w);
  r.ci = opt_interval(j, "ci", w);
  r.drift = opt_number(j, "drift", w);
  r.throttled_arms = strings(j, "throttled_arms", w);
  r.reference_mhz = new_opt_number(j, "reference_mhz", w);
  r.clock_gap = new_opt_number(j, "clock_gap", w);
  const json& arms = array_member(j, "arms", w);
  for (std::size_t i = 0; i < arms.size(); ++i)
    r.arms.push_back(arm_stats_from_json(arms[i], w + ".arms[" + std::to_string(i) + "]"));
  r.sol_ns = new_opt_number(j, "sol_ns", w);
  if (j.contains("sol_bound") && !j["sol_bound"].is_null()) {
    r.sol_bound = field<std::string>(j, "sol_bound", w);
    if (r.sol_bound != "compute" && r.sol_bound != "memory" && r.sol_bound != "launch")
      throw Error(w + ": field 'sol_bound': '" + r.sol_bound +
                  "' is not one of compute, memory, launch");
  }
  if (r.sol_ns.has_value() != !r.sol_bound.empty())
    throw Error(w + ": fields 'sol_ns' and 'sol_bound' must be both set or both null");
  r.baseline_sol_fraction = new_opt_number(j, "baseline_sol_fraction", w);
  r.candidate_sol_fraction = new_opt_number(j, "candidate_sol_fraction", w);
  return r;
}

json to_json(const SpeedOfLight& s) {
  return json{{"table", s.table}, {"gpus", s.gpus}, {"shapes", s.shapes}, {"notes", s.notes}};
}

SpeedOfLight speed_of_light_from_json(const json& j, const std::string& w) {
  SpeedOfLight s;
  s.table = field<std::string>(j, "table", w);
  s.gpus = strings(j, "gpus", w);
  s.shapes = field<int>(j, "shapes", w);
  s.notes = strings(j, "notes", w);
  return s;
}

json to_json(const PrecisionSum& p) {
  return json{{"precision", p.precision},
              {"gemms", p.gemms},
              {"missing", p.missing},
              {"baseline_ns", opt_json(p.baseline_ns)},
              {"candidate_ns", opt_json(p.candidate_ns)},
              {"sol_ns", opt_json(p.sol_ns)},
              {"baseline_vs_bf16", opt_json(p.baseline_vs_bf16)},
              {"candidate_vs_bf16", opt_json(p.candidate_vs_bf16)}};
}

PrecisionSum precision_sum_from_json(const json& j, const std::string& w) {
  PrecisionSum p;
  p.precision = field<std::string>(j, "precision", w);
  p.gemms = field<int>(j, "gemms", w);
  p.missing = strings(j, "missing", w);
  p.baseline_ns = opt_number(j, "baseline_ns", w);
  p.candidate_ns = opt_number(j, "candidate_ns", w);
  p.sol_ns = opt_number(j, "sol_ns", w);
  p.baseline_vs_bf16 = opt_number(j, "baseline_vs_bf16", w);
  p.candidate_vs_bf16 = opt_number(j, "candidate_vs_bf16", w);
  return p;
}

json to_json(const std::optional<LayerSummary>& l) {
  if (!l) return nullptr;
  json precisions = json::array();
  for (const auto& p : l->precisions) precisions.push_back(to_json(p));
  return json{{"precisions", precisions}, {"other_shapes", l->other_shapes}};
}

std::optional<LayerSummary> layer_summary_from_json(const json& j, const std::string& w) {
  if (j.is_null()) return std::nullopt;
  LayerSummary l;
  const json& ps = array_member(j, "precisions", w);
  for (std::size_t i = 0; i < ps.size(); ++i)
    l.precisions.push_back(
        precision_sum_from_json(ps[i], w + ".precisions[" + std::to_string(i) + "]"));
  l.other_shapes = field<int>(j, "other_shapes", w);
  return l;
}

json to_json(const std::optional<Extreme>& e) {
  if (!e) return nullptr;
  return json{{"shape", e->shape}, {"speedup", e->speedup}};
}

std::optional<Extreme> extreme_from_json(const json& j, const char* key, const std::string& w) {
  const json& v = member(j, key, w);
  if (v.is_null()) return std::nullopt;
  std::string where = w + "." + key;
  return Extreme{field<std::string>(v, "shape", where), field<double>(v, "speedup", where)};
}

json to_json(const Summary& s) {
  return json{{"shapes_total", s.shapes_total},
              {"shapes_compared", s.shapes_compared},
              {"shapes_failed", s.shapes_failed},
              {"shapes_throttled", s.shapes_throttled},
              {"verdicts", s.verdicts},
              {"improved", s.improved},
              {"regressed", s.regressed},
              {"geomean", opt_json(s.geomean)},
              {"geomean_ci", opt_json(s.geomean_ci)},
              {"geomean_verdict", s.geomean_verdict ? json(to_string(*s.geomean_verdict)) : json()},
              {"min_speedup", to_json(s.min_speedup)},
              {"max_speedup", to_json(s.max_speedup)},
              {"baseline_total_ns", opt_json(s.baseline_total_ns)},
              {"candidate_total_ns", opt_json(s.candidate_total_ns)},
              {"summed_time_ratio", opt_json(s.summed_time_ratio)},
              {"summed_time_ratio_ci", opt_json(s.summed_time_ratio_ci)}};
}

Summary summary_from_json(const json& j, const std::string& w) {
  Summary s;
  s.shapes_total = field<int>(j, "shapes_total", w);
  s.shapes_compared = field<int>(j, "shapes_compared", w);
  s.shapes_failed = field<int>(j, "shapes_failed", w);
  s.shapes_throttled = field<int>(j, "shapes_throttled", w);
  const json& verdicts = object_field(j, "verdicts", w);
  for (auto it = verdicts.begin(); it != verdicts.end(); ++it) {
    try {
      verdict_from_string(it.key());
    } catch (const Error&) {
      rethrow_with_context(w + ".verdicts");
    }
    s.verdicts[it.key()] = field<int>(verdicts, it.key().c_str(), w + ".verdicts");
  }
  s.improved = field<int>(j, "improved", w);
  s.regressed = field<int>(j, "regressed", w);
  s.geomean = opt_number(j, "geomean", w);
  s.geomean_ci = opt_interval(j, "geomean_ci", w);
  if (const json& v = member(j, "geomean_verdict", w); !v.is_null()) {
    try {
      s.geomean_verdict = verdict_from_string(field<std::string>(j, "geomean_verdict", w));
    } catch (const Error&) {
      rethrow_with_context(w + ": field 'geomean_verdict'");
    }
  }
  s.min_speedup = extreme_from_json(j, "min_speedup", w);
  s.max_speedup = extreme_from_json(j, "max_speedup", w);
  s.baseline_total_ns = opt_number(j, "baseline_total_ns", w);
  s.candidate_total_ns = opt_number(j, "candidate_total_ns", w);
  s.summed_time_ratio = opt_number(j, "summed_time_ratio", w);
  s.summed_time_ratio_ci = opt_interval(j, "summed_time_ratio_ci", w);
  return s;
}

json to_json(const VariantProvenance& v) {
  return json{{"name", v.name},
              {"requested", v.requested},
              {"kind", v.kind},
              {"commit", v.commit},
              {"source_digest", v.source_digest},
              {"tracked_diff_sha256", v.tracked_diff_sha256},
              {"untracked_sha256", v.untracked_sha256},
              {"plugin_sha256", v.plugin_sha256},
              {"toolchain_id", v.toolchain_id}};
}

VariantProvenance variant_provenance_from_json(const json& j, const std::string& w) {
  VariantProvenance v;
  v.name = field<std::string>(j, "name", w);
  v.requested = field<std::string>(j, "requested", w);
  v.kind = field<std::string>(j, "kind", w);
  v.commit = field<std::string>(j, "commit", w);
  v.source_digest = field<std::string>(j, "source_digest", w);
  v.tracked_diff_sha256 = field<std::string>(j, "tracked_diff_sha256", w);
  v.untracked_sha256 = field<std::string>(j, "untracked_sha256", w);
  v.plugin_sha256 = field<std::string>(j, "plugin_sha256", w);
  v.toolchain_id = field<std::string>(j, "toolchain_id", w);
  return v;
}

json to_json(const Provenance& p) {
  json variants = json::array(), machine = json::array();
  for (const auto& v : p.variants) variants.push_back(to_json(v));
  for (const auto& m : p.machine) machine.push_back(abh::to_json(m));
  return json{{"run_id", p.run_id},
              {"harness_version", p.harness_version},
              {"created_at", p.created_at},
              {"repo", p.repo},
              {"plugin_target", p.plugin_target},
              {"command", p.command},
              {"worker_sha256", p.worker_sha256},
              {"result_set_digest", p.result_set_digest},
              {"variants", variants},
              {"machine", machine},
              {"settings", abh::to_json(p.settings)},
              {"schedule",
               {{"name", p.schedule.name},
                {"rounds", p.schedule.rounds},
                {"seed", p.schedule.seed},
                {"gpus", p.schedule.gpus}}}};
}

Provenance provenance_from_json(const json& j, const std::string& w) {
  Provenance p;
  p.run_id = field<std::string>(j, "run_id", w);
  p.harness_version = field<std::string>(j, "harness_version", w);
  p.created_at = field<std::string>(j, "created_at", w);
  p.repo = field<std::string>(j, "repo", w);
  p.plugin_target = field<std::string>(j, "plugin_target", w);
  p.command = strings(j, "command", w);
  p.worker_sha256 = field<std::string>(j, "worker_sha256", w);
  p.result_set_digest = field<std::string>(j, "result_set_digest", w);
  const json& vs = array_member(j, "variants", w);
  for (std::size_t i = 0; i < vs.size(); ++i)
    p.variants.push_back(
        variant_provenance_from_json(vs[i], w + ".variants[" + std::to_string(i) + "]"));
  const json& ms = array_member(j, "machine", w);
  for (std::size_t i = 0; i < ms.size(); ++i)
    p.machine.push_back(environment_from_json(ms[i], w + ".machine[" + std::to_string(i) + "]"));
  p.settings = measure_settings_from_json(object_field(j, "settings", w), w + ".settings");
  const json& sc = object_field(j, "schedule", w);
  p.schedule.name = field<std::string>(sc, "name", w + ".schedule");
  p.schedule.rounds = field<int>(sc, "rounds", w + ".schedule");
  p.schedule.seed = field<std::uint64_t>(sc, "seed", w + ".schedule");
  p.schedule.gpus = field<int>(sc, "gpus", w + ".schedule");
  return p;
}

json to_json(const StatsOptions& o) {
  return json{{"noise_band", o.noise_band},
              {"confidence", o.confidence},
              {"resamples", o.resamples},
              {"seed", o.seed},
              {"clock_normalize", o.clock_normalize}};
}

StatsOptions stats_options_from_json(const json& j, const std::string& w) {
  StatsOptions o;
  o.noise_band = field<double>(j, "noise_band", w);
  o.confidence = field<double>(j, "confidence", w);
  o.resamples = field<int>(j, "resamples", w);
  o.seed = field<std::uint64_t>(j, "seed", w);
  o.clock_normalize = j.contains("clock_normalize") ? field<bool>(j, "clock_normalize", w) : false;
  return o;
}

}  // namespace

Report build_report(const Plan& plan, const std::vector<ArmOutcome>& outcomes,
                    const StatsOptions& opt, const std::string& result_set_digest,
                    const RooflineContext& roofline) {
  validate(opt);
  const auto by_arm = index_outcomes(plan, outcomes);
  Report r;
  r.schema_version = kReportSchemaVersion;
  r.stats = opt;
  // Estimates live beside the rows (they carry the bootstrap replicates the aggregate needs).
  std::vector<std::optional<RatioEstimate>> estimates(plan.shapes.size());
  for (std::size_t i = 0; i < plan.shapes.size(); ++i)
    r.shapes.push_back(shape_row(plan, plan.shapes[i], by_arm, opt, estimates[i]));
  std::vector<const RatioEstimate*> compared;
  for (const auto& e : estimates)
    if (e) compared.push_back(&*e);
  r.summary = summarize(r.shapes, compared, opt);
  r.sol = add_speed_of_light(plan, roofline, r.shapes);
  r.layer = layer_summary(plan, r.shapes);
  r.provenance = provenance(plan, result_set_digest);
  return r;
}

int count_regressions(const Report& r) {
  int n = 0;
  for (const auto& s : r.shapes) n += s.verdict == Verdict::slower;
  return n;
}

json to_json(const Report& r) {
  json shapes = json::array();
  for (const auto& s : r.shapes) shapes.push_back(to_json(s));
  return json{{"schema_version", r.schema_version}, {"stats", to_json(r.stats)},
              {"summary", to_json(r.summary)},      {"shapes", shapes},
              {"speed_of_light", to_json(r.sol)},   {"layer_summary", to_json(r.layer)},
              {"provenance", to_json(r.provenance)}};
}

Report report_from_json(const json& j, const std::string& where) {
  Report r;
  r.schema_version = field<int>(j, "schema_version", where);
  if (r.schema_version != kReportSchemaVersion)
    throw Error(where + ": field 'schema_version': found " + std::to_string(r.schema_version) +
                ", this abharness reads report schema " + std::to_string(kReportSchemaVersion) +
                ": regenerate the report from its run directory with this version");
  r.stats = stats_options_from_json(object_field(j, "stats", where), where + ".stats");
  r.summary = summary_from_json(object_field(j, "summary", where), where + ".summary");
  const json& shapes = array_member(j, "shapes", where);
  for (std::size_t i = 0; i < shapes.size(); ++i)
    r.shapes.push_back(
        shape_row_from_json(shapes[i], where + ".shapes[" + std::to_string(i) + "]"));
  if (j.contains("speed_of_light"))
    r.sol = speed_of_light_from_json(object_field(j, "speed_of_light", where),
                                     where + ".speed_of_light");
  if (j.contains("layer_summary"))
    r.layer = layer_summary_from_json(j["layer_summary"], where + ".layer_summary");
  r.provenance = provenance_from_json(object_field(j, "provenance", where), where + ".provenance");
  return r;
}

}  // namespace abh
