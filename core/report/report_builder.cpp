#include "report/report_builder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "model/plan_index.hpp"
#include "model/timing.hpp"
#include "report/layer_summary.hpp"
#include "report/report_notes.hpp"
#include "stats/tick_ties.hpp"
#include "system/error.hpp"
#include "system/version.hpp"

namespace abh {
namespace {

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
  a.ok = true;
  a.min_ns = *std::min_element(m.samples_ns.begin(), m.samples_ns.end());
  // The worker's own robust noise (robust_noise in statistics.hpp), so the column agrees with
  // the stop reason it recorded.
  a.noise = m.noise;
  a.samples = m.samples_ns.size();
  a.timer = m.timer;
  a.stop_reason = m.stop_reason;
  a.kernel_names = m.kernel_names;
  a.tactic = m.tactic;
  if (!m.clock.sample_mhz.empty()) a.median_mhz = median(m.clock.sample_mhz);
  return a;
}

using ArmKey = std::pair<std::string, std::string>;  // (shape, arm)

std::map<ArmKey, const ArmOutcome*> index_outcomes(const PlanIndex& plan,
                                                   const std::vector<ArmOutcome>& outcomes) {
  std::map<ArmKey, const ArmOutcome*> by_arm;
  for (const auto& o : outcomes) {
    const Task* planned = plan.task(o.task.shape, o.task.arm);
    if (!planned || !(*planned == o.task))
      throw Error("report: outcome for " + o.task.shape + "/" + o.task.arm +
                  " is not a task of plan " + plan.plan().run_id +
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

// Marks the valid arms left out of the estimate as disturbed (outlier_arms in
// stats/arm_variation.hpp), at their medians, which are then all final (at one clock when
// normalized).
void mark_outliers(std::vector<ArmStats>& arms, const StatsOptions& opt) {
  std::vector<double> logs[2];
  std::vector<ArmStats*> of[2];
  for (ArmStats& a : arms) {
    if (!a.ok) continue;
    const int v = a.variant == "baseline" ? 0 : 1;
    logs[v].push_back(std::log(a.median_ns));
    of[v].push_back(&a);
  }
  const OutlierArms out =
      outlier_arms(logs[0], logs[1], opt.outlier_arm_sigmas, std::log1p(opt.noise_band / 2));
  const std::vector<bool>* flags[2] = {&out.a, &out.b};
  for (int v = 0; v < 2; ++v)
    for (std::size_t i = 0; i < of[v].size(); ++i)
      if ((*flags[v])[i]) of[v][i]->outlier_ratio = std::exp(logs[v][i] - median(logs[v]));
}

// A shape's valid arms' samples (at one clock when normalized), ready for the interval.
struct ShapeSamples {
  std::vector<std::vector<double>> a, b;
};

// Fills the row's speedup, interval, drift and verdict from stage one of its bootstrap and the
// prior its run's other shapes give.
RatioEstimate compare(ShapeRow& row, const ArmBootstrap& arms, const ArmVariation& prior,
                      const StatsOptions& opt) {
  RatioEstimate e = bootstrap_ratio(arms, prior, opt);
  row.baseline_ns = e.baseline_ns;
  row.candidate_ns = e.candidate_ns;
  row.speedup = e.ratio;
  row.ci = e.ci;
  row.own_variation = e.own;
  row.variation = e.variation;
  // Over every valid baseline arm, those left out as disturbed too: the drift is what the first
  // and last arm read, the same in each candidate's report of a variants file.
  std::vector<double> baseline_medians;
  for (const auto& a : row.arms)
    if (a.variant == "baseline" && a.ok) baseline_medians.push_back(a.median_ns);
  row.drift = drift(baseline_medians);
  // The drift enters the verdict only while the shape has a single pair of baseline arms: with
  // more blocks the interval itself carries the arm-to-arm variation the drift shows (and the
  // first and last arm of many blocks are far apart in time, so their ratio alone says little).
  // A drift beyond the band widens the interval to both ends of the baseline; a verdict that
  // survives it stands, with the drift shown (statistics.hpp).
  const bool judge_drift =
      baseline_medians.size() <= 2 && row.drift && std::abs(*row.drift - 1) > opt.noise_band;
  if (judge_drift) row.drift_ci = drift_widened(e.ci, baseline_medians);
  row.verdict = classify(judge_drift ? *row.drift_ci : e.ci, judge_drift ? row.drift : std::nullopt,
                         opt.noise_band);
  // With no between-arm degrees of freedom anywhere (one A and one B arm per shape), the
  // interval holds sample noise only: it cannot support a direction.
  if (e.variation.df == 0 && row.verdict != Verdict::unstable) row.verdict = Verdict::ambiguous;
  return e;
}

// The arms of one shape in execution order. A conditional (adaptive) block's tasks count only
// when they have an outcome: blocks the rule did not call for never ran.
ShapeRow shape_arms(const PlanIndex& plan, const Shape& shape,
                    const std::map<ArmKey, const ArmOutcome*>& outcomes, const StatsOptions& opt,
                    std::optional<ShapeSamples>& samples) {
  ShapeRow row;
  row.shape = shape.id;
  row.label = shape.label;
  row.params = shape.params;
  row.timing = shape_timing(shape);
  std::vector<const Measurement*> measured;  // beside row.arms, for the valid arms
  std::string failures;
  bool all_clocked = true;
  for (const std::size_t i : plan.tasks_of(shape.id)) {
    const Task& t = plan.plan().tasks[i];
    auto it = outcomes.find({t.shape, t.arm});
    if (t.conditional && it == outcomes.end()) continue;
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
  std::vector<std::vector<double>> arm_samples(row.arms.size());
  for (std::size_t i = 0; i < row.arms.size(); ++i) {
    ArmStats& a = row.arms[i];
    if (!a.ok) continue;
    const Measurement& m = *measured[i];
    // Ties at the timer's tick spread first (stats/tick_ties.hpp), so that the median, the
    // clock adjustment and the bootstrap all read between the ticks.
    arm_samples[i] =
        opt.spread_ties ? spread_ties(m.samples_ns, m.clock.timer_resolution_ns) : m.samples_ns;
    a.median_ns = a.raw_median_ns = median(arm_samples[i]);
    if (normalize) {
      a.clock_slope = clock_slope(m.samples_ns, m.clock.sample_mhz);
      arm_samples[i] =
          clock_adjusted(arm_samples[i], m.clock.sample_mhz, *a.clock_slope, *row.reference_mhz);
      a.median_ns = median(arm_samples[i]);
    }
    set_rates(a, m);
  }
  mark_outliers(row.arms, opt);
  ShapeSamples s;
  for (std::size_t i = 0; i < row.arms.size(); ++i)
    if (row.arms[i].counts())
      (row.arms[i].variant == "baseline" ? s.a : s.b).push_back(std::move(arm_samples[i]));
  if (row.arms.empty()) failures = "the plan has no arms for this shape";
  if (failures.empty() && (s.a.empty() || s.b.empty()))
    failures = "the schedule has no baseline or no candidate arm for this shape";
  if (!failures.empty()) {
    row.verdict = Verdict::failed;
    row.failure = failures;
    return row;
  }
  samples = std::move(s);
  return row;
}

// The decided shapes' verdict, unless it claims a change that the interval over every compared
// shape does not: then ambiguous. An undecided shape can thus neither carry the headline nor be
// outvoted by a few decided ones (an idle CPU A/A of nine shapes, eight undecided and one falsely
// faster, read "faster" on the one).
Verdict headline_verdict(const Interval& decided_ci, const Interval& all_ci, double band) {
  const Verdict v = classify(decided_ci, std::nullopt, band);
  const bool change = v == Verdict::faster || v == Verdict::slower;
  return change && classify(all_ci, std::nullopt, band) != v ? Verdict::ambiguous : v;
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
  // The estimates are the compared rows', in row order.
  std::vector<const RatioEstimate*> decided;
  std::size_t k = 0;
  for (const auto& row : rows) {
    if (!row.speedup) continue;
    if (row.verdict == Verdict::faster || row.verdict == Verdict::slower ||
        row.verdict == Verdict::same)
      decided.push_back(estimates.at(k));
    ++k;
  }
  s.decided_shapes = static_cast<int>(decided.size());
  s.geomean_verdict = Verdict::ambiguous;
  if (!decided.empty()) {
    const AggregateEstimate d = decided.size() == estimates.size() ? a : aggregate(decided, opt);
    s.decided_geomean = d.geomean;
    s.decided_geomean_ci = d.geomean_ci;
    s.geomean_verdict = headline_verdict(d.geomean_ci, a.geomean_ci, opt.noise_band);
  }
  s.baseline_total_ns = a.baseline_total_ns;
  s.candidate_total_ns = a.candidate_total_ns;
  s.summed_time_ratio = a.summed_ratio;
  s.summed_time_ratio_ci = a.summed_ratio_ci;
  return s;
}

// The timings of the rows, in order of first appearance.
std::vector<std::string> row_timings(const std::vector<ShapeRow>& rows) {
  std::vector<std::string> timings;
  for (const ShapeRow& row : rows)
    if (std::find(timings.begin(), timings.end(), row.timing) == timings.end())
      timings.push_back(row.timing);
  return timings;
}

// Each shape's prior for its between-arm variation, pooled from the other shapes of its own
// timing only (another timing's arms vary differently), robust to the shapes that conflict with
// theirs (robust_priors).
RobustPriors priors_by_timing(const std::vector<ShapeRow>& rows,
                              const std::vector<std::optional<ArmVariation>>& own,
                              const StatsOptions& opt) {
  // Below kBandFraction of the band a between-arm spread matters to no verdict: no shape
  // conflicts with a prior there, however quiet.
  const double floor = std::pow(kBandFraction * opt.noise_band, 2);
  const std::vector<std::string> timings = row_timings(rows);
  if (timings.size() <= 1)
    return robust_priors(own, opt.prior_conflict_level, floor, opt.prior_conflict_median,
                         opt.prior_conflict_own_floor);
  RobustPriors all{std::vector<ArmVariation>(rows.size()), std::vector<bool>(rows.size(), false)};
  for (const std::string& t : timings) {
    std::vector<std::optional<ArmVariation>> of_t(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].timing == t) of_t[i] = own[i];
    const RobustPriors p = robust_priors(of_t, opt.prior_conflict_level, floor,
                                         opt.prior_conflict_median, opt.prior_conflict_own_floor);
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].timing == t) all.priors[i] = p.priors[i], all.conflict[i] = p.conflict[i];
  }
  return all;
}

// One summary over every row; with several timings, one per timing besides it, which alone
// aggregate (a geomean over shapes never mixes two timings).
void summarize_timings(Report& r, const std::vector<std::optional<RatioEstimate>>& estimates,
                       const StatsOptions& opt) {
  const std::vector<std::string> timings = row_timings(r.shapes);
  if (timings.size() <= 1) {
    std::vector<const RatioEstimate*> compared;
    for (const auto& e : estimates)
      if (e) compared.push_back(&*e);
    r.summary = summarize(r.shapes, compared, opt);
    return;
  }
  // Counts over every row; no aggregate, not even the range, which would compare two timings.
  r.summary = summarize(r.shapes, {}, opt);
  r.summary.min_speedup.reset();
  r.summary.max_speedup.reset();
  for (const std::string& t : timings) {
    std::vector<ShapeRow> rows;
    std::vector<const RatioEstimate*> compared;
    for (std::size_t i = 0; i < r.shapes.size(); ++i) {
      if (r.shapes[i].timing != t) continue;
      rows.push_back(r.shapes[i]);
      if (estimates[i]) compared.push_back(&*estimates[i]);
    }
    r.by_timing.push_back({t, summarize(rows, compared, opt)});
  }
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
    p.variants.push_back({v.name, v.source, v.plugin_sha256, v.toolchain_id});
  p.machine = plan.machine;
  p.settings = plan.settings;
  p.schedule = plan.schedule;
  return p;
}

}  // namespace

Report build_report(const Plan& plan, const std::vector<ArmOutcome>& outcomes,
                    const StatsOptions& opt, const std::string& result_set_digest,
                    const RooflineContext& roofline) {
  validate(opt);
  const PlanIndex index(plan);
  const auto by_arm = index_outcomes(index, outcomes);
  Report r;
  r.schema_version = kReportSchemaVersion;
  r.stats = opt;
  // Stage one for every shape (its arms, the sample bootstrap, its own between-arm estimate),
  // then stage two, which borrows the other shapes' estimates (statistics.hpp).
  std::vector<std::optional<ArmBootstrap>> stage_one(plan.shapes.size());
  for (std::size_t i = 0; i < plan.shapes.size(); ++i) {
    std::optional<ShapeSamples> samples;
    r.shapes.push_back(shape_arms(index, plan.shapes[i], by_arm, opt, samples));
    if (samples)
      stage_one[i] =
          bootstrap_arms(samples->a, samples->b, opt, stream_seed(opt.seed, plan.shapes[i].id));
  }
  // Estimates live beside the rows (they carry the bootstrap replicates the aggregate needs).
  std::vector<std::optional<RatioEstimate>> estimates(plan.shapes.size());
  std::vector<std::optional<ArmVariation>> own(plan.shapes.size());
  for (std::size_t i = 0; i < plan.shapes.size(); ++i)
    if (stage_one[i]) own[i] = stage_one[i]->own;
  const RobustPriors priors = priors_by_timing(r.shapes, own, opt);
  for (std::size_t i = 0; i < plan.shapes.size(); ++i) {
    if (!stage_one[i]) continue;
    r.shapes[i].prior_conflict = priors.conflict[i];
    estimates[i] = compare(r.shapes[i], *stage_one[i], priors.priors[i], opt);
  }
  summarize_timings(r, estimates, opt);
  r.sol = add_speed_of_light(index, roofline, r.shapes);
  r.layer = layer_summary(plan, r.shapes);
  r.provenance = provenance(plan, result_set_digest);
  r.notes = report_notes(r);
  return r;
}

}  // namespace abh
