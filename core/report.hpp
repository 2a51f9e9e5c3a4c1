// C9 report model: everything a renderer shows, computed once from the plan and the validated
// arm outcomes. Renderers (report_render.hpp) only format it; `to_json` / `report_from_json` map it
// to report.json (schemas/report.schema.json), from which any other format can be re-rendered.
//
// A shape gets a speedup only when every planned arm has a valid, verified result; otherwise its
// verdict is "failed" with the reason, and it is left out of every aggregate (the summary says how
// many and which).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "json_io.hpp"
#include "outcome.hpp"
#include "plan.hpp"
#include "statistics.hpp"

namespace abh {

// One arm of one shape, as measured.
struct ArmStats {
  std::string arm;      // "A1", "B", "A2", ...
  std::string variant;  // "baseline" | "candidate"
  int round = 0;
  bool ok = false;      // a valid, verified result exists
  std::string failure;  // why not, when !ok
  // The fields below are meaningful only when ok.
  double median_ns = 0;
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
  bool operator==(const ArmStats&) const = default;
};

struct ShapeRow {
  std::string shape;
  std::string label;
  std::vector<ArmStats> arms;  // in execution order
  Verdict verdict = Verdict::failed;
  std::string failure;  // verdict failed: which arm(s) and why
  // Set exactly when the verdict is not failed:
  std::optional<double> baseline_ns;   // mean of the A arms' medians
  std::optional<double> candidate_ns;  // mean of the B arms' medians
  std::optional<double> speedup;       // baseline_ns / candidate_ns (> 1: candidate faster)
  std::optional<Interval> ci;
  std::optional<double> drift;  // last A / first A; absent when the schedule has one A arm
  std::vector<std::string> throttled_arms;
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
  std::optional<Verdict> geomean_verdict;  // classify(geomean_ci) with no drift term
  std::optional<Extreme> min_speedup, max_speedup;
  std::optional<double> baseline_total_ns, candidate_total_ns;
  std::optional<double> summed_time_ratio;  // baseline_total_ns / candidate_total_ns
  std::optional<Interval> summed_time_ratio_ci;
  bool operator==(const Summary&) const = default;
};

struct VariantProvenance {
  std::string name;       // baseline | candidate
  std::string requested;  // what the user typed
  std::string kind;       // commit | worktree
  std::string commit;
  std::string source_digest;
  std::string tracked_diff_sha256, untracked_sha256;  // worktree only
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

struct Report {
  int schema_version = 0;
  StatsOptions stats;
  Summary summary;
  std::vector<ShapeRow> shapes;  // in plan order
  Provenance provenance;
};

// Computes the report. Outcomes are matched to the plan's tasks by (shape, arm); a planned arm
// without an outcome is a failed arm ("no outcome"); an outcome the plan does not contain, or two
// for one arm, is an error (validation should have refused them). A result whose correctness
// check did not pass, or that has no samples, counts as a failed arm.
Report build_report(const Plan& plan, const std::vector<ArmOutcome>& outcomes,
                    const StatsOptions& opt, const std::string& result_set_digest);

// Shapes whose verdict is "slower": what --fail-on-regression fails on. Unstable and ambiguous
// shapes are not counted (they are not evidence of a regression) but are visible in the summary.
int count_regressions(const Report& r);

json to_json(const Report& r);
Report report_from_json(const json& j, const std::string& where);

}  // namespace abh
