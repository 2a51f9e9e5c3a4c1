// The report model: everything a renderer shows, computed once from the plan and the validated
// arm outcomes (report_builder.hpp). Renderers (report_render.hpp) only format it; report_json.hpp
// maps it to report.json (schemas/report.schema.json), from which any other format can be
// re-rendered. This header holds the types only.
//
// A shape gets a speedup only when every planned arm has a valid, verified result; otherwise its
// verdict is "failed" with the reason, and it is left out of every aggregate (the summary says how
// many and which).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/environment.hpp"
#include "model/identity.hpp"
#include "model/schedule.hpp"
#include "model/settings.hpp"
#include "stats/statistics.hpp"
#include "system/json_io.hpp"

namespace abh {

// One arm of one shape, as measured.
struct ArmStats {
  std::string arm;      // "A1", "B", "A2", ...
  std::string variant;  // "baseline" | "candidate"
  int round = 0;
  bool ok = false;      // a valid, verified result exists
  std::string failure;  // why not, when !ok
  // The fields below are meaningful only when ok.
  double median_ns = 0;      // at the shape's reference clock when the shape is clock-normalized
  double raw_median_ns = 0;  // the median of the samples as measured
  double min_ns = 0;
  double noise = 0;  // the worker's robust noise: 1.4826 * MAD / median of the samples
  std::uint64_t samples = 0;
  std::string timer;
  std::string stop_reason;
  std::vector<std::string> kernel_names;
  std::string tactic;
  std::optional<double> tflops;  // measurement.flops at the median time; absent when flops = 0
  std::optional<double> gbps;    // measurement.min_bytes at the median time
  bool throttled = false;        // result.telemetry.throttled
  std::string throttle_note;
  // GPU arms with clocked samples: the median SM clock and the fitted slope of log(time) on
  // log(clock) (statistics.hpp); absent otherwise.
  std::optional<double> median_mhz, clock_slope;
  // The shape's speed-of-light time / median_ns: 1 = at the roofline bound. Absent when the arm
  // failed or the shape has no speed-of-light time (Report::sol says why).
  std::optional<double> sol_fraction;
  // Set when the arm was left out of the shape's estimate as disturbed (outlier_arms in
  // stats/arm_variation.hpp): its median over the median of its variant's arms. Such an arm is
  // valid (ok) and shown, but counts in no median, interval or arm count of the comparison.
  std::optional<double> outlier_ratio;
  bool counts() const { return ok && !outlier_ratio; }
  bool operator==(const ArmStats&) const = default;
};

// What a run concluded about one shape: its verdict and, when the shape was compared, its times,
// speedup and interval. A comparison across runs (comparison.hpp) shows this much of each run.
struct ShapeEstimate {
  Verdict verdict = Verdict::failed;
  std::string failure;  // verdict failed: which arm(s) and why
  // Set exactly when the verdict is not failed:
  std::optional<double> baseline_ns;   // mean of the A arms' medians
  std::optional<double> candidate_ns;  // mean of the B arms' medians
  std::optional<double> speedup;       // baseline_ns / candidate_ns (> 1: candidate faster)
  std::optional<Interval> ci;
  bool operator==(const ShapeEstimate&) const = default;
};

struct ShapeRow : ShapeEstimate {
  std::string shape;
  std::string label;
  json params = json::object();   // the grid's parameters of the shape, as the plugin got them
  std::string timing = "kernel";  // what its arms timed (model/timing.hpp): one per row
  std::vector<ArmStats> arms;     // in execution order
  std::optional<double> drift;    // last A / first A (statistics.hpp); absent with one A arm
  // The interval the verdict was judged on when a one-block shape's drift exceeded the band
  // (drift_widened in statistics.hpp); absent otherwise.
  std::optional<Interval> drift_ci;
  // Variation between whole arms (statistics.hpp), log scale: the shape's own estimate and the
  // one moderated with the run's other shapes that the interval used.
  std::optional<ArmVariation> own_variation, variation;
  // The own estimate conflicted with the other shapes' (robust_priors): the interval rests on the
  // shape's own arms (and those of the run's other such shapes,
  // StatsOptions::prior_conflict_median), and the other shapes' priors leave it out.
  bool prior_conflict = false;
  std::vector<std::string> throttled_arms;
  // Set when the shape was compared at one SM clock (StatsOptions::clock_normalize): the median of
  // all its samples' clocks, to which every sample was moved.
  std::optional<double> reference_mhz;
  // Candidate arms' median clock / baseline arms' - 1, when clocks were recorded. One shape's gap
  // is mostly arm-to-arm clock wander; averaged over shapes (note::ClockGap) it shows a
  // candidate that draws more power and, at the power cap, keeps less of its speedup.
  std::optional<double> clock_gap;
  // Speed of light (stats/roofline.hpp) on the shape's GPU; absent when it cannot be computed.
  std::optional<double> sol_ns;
  std::string sol_bound;  // "compute" | "memory" | "launch" when sol_ns is set
  // sol_ns / baseline_ns and sol_ns / candidate_ns, set when both sol_ns and the speedup are.
  std::optional<double> baseline_sol_fraction, candidate_sol_fraction;
  bool operator==(const ShapeRow&) const = default;
};

struct Extreme {
  std::string shape;
  double speedup = 0;
  bool operator==(const Extreme&) const = default;
};

struct Summary {
  int shapes_total = 0;
  int shapes_compared = 0;  // shapes with a speedup: the ones in every aggregate below
  int shapes_failed = 0;
  int shapes_throttled = 0;
  std::map<std::string, int> verdicts;  // every verdict name, with its count (0 included)
  int improved = 0;                     // verdict faster: whole interval above 1 + band
  int regressed = 0;                    // verdict slower: whole interval below 1 - band
  // Absent when no shape could be compared.
  std::optional<double> geomean;
  std::optional<Interval> geomean_ci;
  // The headline's verdict rests on the decided shapes only (faster, slower or same): an
  // undecided shape's speedup is still the best estimate of it and stays in the geomean above, but
  // it must not carry the verdict (docs/statistics.md). classify(decided_geomean_ci), no drift
  // term; ambiguous when no shape is decided, or when it claims a change (faster, slower) that
  // classify(geomean_ci) over every compared shape does not.
  std::optional<Verdict> geomean_verdict;
  int decided_shapes = 0;
  std::optional<double> decided_geomean;  // geomean over the decided shapes; absent with none
  std::optional<Interval> decided_geomean_ci;
  std::optional<Extreme> min_speedup, max_speedup;
  std::optional<double> baseline_total_ns, candidate_total_ns;
  std::optional<double> summed_time_ratio;  // baseline_total_ns / candidate_total_ns
  std::optional<Interval> summed_time_ratio_ci;
  bool operator==(const Summary&) const = default;
};

// The summary of the rows of one timing, when a run measured several (model/timing.hpp): a
// geomean over shapes never mixes timings.
struct TimingSummary {
  std::string timing;
  Summary summary;
  bool operator==(const TimingSummary&) const = default;
};

struct VariantProvenance {
  std::string name;  // baseline | candidate
  // What was measured, as the plan recorded it. report.json holds it without the submodules,
  // which its digest covers (plan.json lists them).
  SourceIdentity source;
  std::string plugin_sha256;
  std::string toolchain_id;
  bool operator==(const VariantProvenance&) const = default;
};

struct Provenance {
  std::string run_id;
  std::string harness_version;
  std::string created_at;
  std::string repo;
  std::string plugin_target;
  std::vector<std::string> command;
  std::string worker_sha256;
  std::string result_set_digest;
  std::vector<VariantProvenance> variants;
  std::vector<Environment> machine;
  MeasureSettings settings;
  ScheduleOptions schedule;
};

// How the speed-of-light times were obtained, and why shapes have none. Notes are recorded once
// per distinct reason (with the number of shapes it applies to), never per arm.
struct SpeedOfLight {
  std::string table;              // the GPU table's file; empty when none was loaded
  std::vector<std::string> gpus;  // table entries used, sorted
  int shapes = 0;                 // shapes with a speed-of-light time
  std::vector<std::string> notes;
  bool operator==(const SpeedOfLight&) const = default;
};

// Per-layer summary of a model grid (`abharness grid --model`, layer_summary.hpp): one entry per
// precision recipe, summing the mean times of that precision's GEMMs.
struct PrecisionSum {
  std::string precision;             // recipe: bf16, fp8, fp8_block, mxfp8, nvfp4
  int gemms = 0;                     // model GEMMs of this precision in the plan (12 per layer)
  std::vector<std::string> missing;  // failed shapes, left out of both sums: the sums are partial
  // Sums over the compared GEMMs; absent when none was compared.
  std::optional<double> baseline_ns, candidate_ns;
  std::optional<double> sol_ns;  // sum of speed-of-light times, when every GEMM has one
  // This precision's sum / bf16's sum, per variant; absent without bf16 or when either sum is
  // partial (a ratio of partial sums compares different sets of GEMMs).
  std::optional<double> baseline_vs_bf16, candidate_vs_bf16;
  bool operator==(const PrecisionSum&) const = default;
};

struct LayerSummary {
  std::vector<PrecisionSum> precisions;  // in known_precisions() order
  int other_shapes = 0;                  // shapes that are not model GEMMs: in no sum
  bool operator==(const LayerSummary&) const = default;
};

// The notes a report makes about its own figures (report_notes.hpp): a closed set of kinds, each
// with the data it states. Every format words them alike (fmt::note_text in report_render.hpp).
namespace note {
// Why shapes have no speed-of-light time: one of SpeedOfLight::notes.
struct NoSpeedOfLight {
  std::string reason;
  bool operator==(const NoSpeedOfLight&) const = default;
};
// `shapes` shapes were compared at one SM clock each (ShapeRow::reference_mhz); their reference
// clocks span lo_mhz..hi_mhz.
struct AtOneClock {
  int shapes = 0;
  double lo_mhz = 0, hi_mhz = 0;
  bool operator==(const AtOneClock&) const = default;
};
// A shape compared as measured while clock normalization was on, because only some of its arms
// recorded clock readings: the others.
struct NotAtOneClock {
  std::string shape;
  std::vector<std::string> unclocked_arms;
  bool operator==(const NotAtOneClock&) const = default;
};
// The geometric mean of ShapeRow::clock_gap over the `shapes` shapes that have one: below 0 the
// candidate's arms ran at lower clocks than the baseline's.
struct ClockGap {
  int shapes = 0;
  double mean = 0;
  bool operator==(const ClockGap&) const = default;
};
// `shapes` undecided shapes (the first of them named) know how much whole arms differ from at
// most `df` (< 4) degrees of freedom, which widens their intervals.
struct FewArmDegrees {
  int shapes = 0;
  std::string first_shape;
  double df = 0;
  bool operator==(const FewArmDegrees&) const = default;
};
// `shapes` one-block shapes (the first named) whose baseline drifted beyond the band were judged
// on the interval widened by the drift (ShapeRow::drift_ci); `decided` of them still had a verdict.
struct DriftJudged {
  int shapes = 0, decided = 0;
  std::string first_shape;
  bool operator==(const DriftJudged&) const = default;
};
// `shapes` shapes (the first named) were called faster or slower on a single candidate arm: no
// confirmation block ran for them (docs/statistics.md#confirmation), so the gate counts them as
// undecided.
struct Unconfirmed {
  int shapes = 0;
  std::string first_shape;
  bool operator==(const Unconfirmed&) const = default;
};
// Shapes decided on one candidate arm without confirmation (decisive_one_arm): device-timed, the
// interval wholly beyond `factor`.
struct Decisive {
  int shapes = 0;
  std::string first_shape;
  double factor = 0;
  bool operator==(const Decisive&) const = default;
};
// Shapes whose arms varied far more than the run's other shapes' (ShapeRow::prior_conflict): each
// judged on its own arms (and those of the other such shapes), and left out of the others' priors.
struct PriorConflict {
  int shapes = 0;
  std::string first_shape;
  double level = 0;
  // Tested against the median of the other shapes (StatsOptions::prior_conflict_median): such
  // shapes borrow from one another.
  bool median = false;
  bool operator==(const PriorConflict&) const = default;
};
// `arms` arms of `shapes` shapes (the first named, with its median over its variant's median arm)
// were left out of their shapes' estimates as disturbed (ArmStats::outlier_ratio): beyond
// `sigmas` robust standard deviations of their shape's arms and half the band.
struct OutlierArms {
  int arms = 0, shapes = 0;
  std::string first;  // shape/arm
  double first_ratio = 0;
  double sigmas = 0;
  bool operator==(const OutlierArms&) const = default;
};
// The conditional blocks that ran (--until-decided): `blocks` blocks of `shapes` shapes, `arms`
// arms in all, beyond the `planned` blocks of every shape; `limit` is the most a shape could get.
struct ExtraBlocks {
  int shapes = 0, blocks = 0, arms = 0, planned = 0, limit = 0;
  bool operator==(const ExtraBlocks&) const = default;
};
// `shapes` undecided shapes had blocks left under --until-decided but got none, because even all
// of them could not decide the shape (report/adaptive.hpp, futile_width); the first is named with
// the half-width its interval was expected to keep (a fraction).
struct Withheld {
  int shapes = 0;
  std::string first_shape;
  double first_expected = 0;
  bool operator==(const Withheld&) const = default;
};
// The run was planned with --share-host and timed what the host's load disturbs (a CPU lane, or
// launch timing): other runs may have measured beside its arms on other CPUs of the machine.
struct SharedHost {
  bool operator==(const SharedHost&) const = default;
};
}  // namespace note
using ReportNote =
    std::variant<note::NoSpeedOfLight, note::AtOneClock, note::NotAtOneClock, note::ClockGap,
                 note::SharedHost, note::FewArmDegrees, note::DriftJudged, note::Unconfirmed,
                 note::Decisive, note::PriorConflict, note::OutlierArms, note::ExtraBlocks,
                 note::Withheld>;

struct Report {
  int schema_version = 0;
  StatsOptions stats;
  // Every row; with several timings its verdict counts cover them all and its aggregates
  // (geomean, range, summed-time ratio) are absent: by_timing holds them, one per timing.
  Summary summary;
  std::vector<TimingSummary> by_timing;  // empty with one timing
  std::vector<ShapeRow> shapes;          // in plan order
  SpeedOfLight sol;
  std::optional<LayerSummary> layer;  // present when the plan has model-grid GEMMs
  Provenance provenance;
  // report_notes(*this), in the order renderers show them. Derived from the fields above, so
  // report.json does not store them: report_from_json derives them again.
  std::vector<ReportNote> notes;
};

}  // namespace abh
