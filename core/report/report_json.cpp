#include "report/report_json.hpp"

#include <cstdint>
#include <optional>
#include <vector>

#include "model/timing.hpp"
#include "report/report_notes.hpp"
#include "system/error.hpp"
#include "system/json_large.hpp"
#include "system/version.hpp"

namespace abh {
namespace {

const json& member(const json& j, const char* key, const std::string& where) {
  require_object(j, where);
  auto it = j.find(key);
  if (it == j.end()) throw Error(where + ": field '" + key + "' is missing");
  return *it;
}

}  // namespace

json opt_json(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}
json to_json(const Interval& i) {
  return json{{"lo", i.lo}, {"hi", i.hi}};
}
json opt_json(const std::optional<Interval>& v) {
  return v ? to_json(*v) : json(nullptr);
}

std::optional<double> opt_number(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (v.is_null()) return std::nullopt;
  return field<double>(j, key, where);
}

std::optional<Interval> opt_interval(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (v.is_null()) return std::nullopt;
  return {{field<double>(v, "lo", where + "." + key), field<double>(v, "hi", where + "." + key)}};
}

json to_json(const ShapeEstimate& e) {
  return json{{"verdict", to_string(e.verdict)},        {"failure", e.failure},
              {"baseline_ns", opt_json(e.baseline_ns)}, {"candidate_ns", opt_json(e.candidate_ns)},
              {"speedup", opt_json(e.speedup)},         {"ci", opt_json(e.ci)}};
}

ShapeEstimate shape_estimate_from_json(const json& j, const std::string& w) {
  ShapeEstimate e;
  try {
    e.verdict = verdict_from_string(field<std::string>(j, "verdict", w));
  } catch (const Error&) {
    rethrow_with_context(w + ": field 'verdict'");
  }
  e.failure = field<std::string>(j, "failure", w);
  e.baseline_ns = opt_number(j, "baseline_ns", w);
  e.candidate_ns = opt_number(j, "candidate_ns", w);
  e.speedup = opt_number(j, "speedup", w);
  e.ci = opt_interval(j, "ci", w);
  return e;
}

namespace {

// The optional fields added with speed of light and clock normalization: absent in older
// report.json files, so a missing key reads as absent, like null.
std::optional<double> new_opt_number(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) return std::nullopt;
  return opt_number(j, key, where);
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
              {"clock_slope", opt_json(a.clock_slope)},
              {"outlier_ratio", opt_json(a.outlier_ratio)}};
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
  a.kernel_names = string_array(j, "kernel_names", w);
  a.tactic = field<std::string>(j, "tactic", w);
  a.tflops = opt_number(j, "tflops", w);
  a.gbps = opt_number(j, "gbps", w);
  a.throttled = field<bool>(j, "throttled", w);
  a.throttle_note = field<std::string>(j, "throttle_note", w);
  a.sol_fraction = new_opt_number(j, "sol_fraction", w);
  a.median_mhz = new_opt_number(j, "median_mhz", w);
  a.clock_slope = new_opt_number(j, "clock_slope", w);
  a.outlier_ratio = new_opt_number(j, "outlier_ratio", w);
  return a;
}

// The between-arm estimates: variances of log arm medians (their square roots are relative
// standard deviations: 0.01 is 1 % between arms) and their degrees of freedom.
json arm_variation_json(const ShapeRow& r) {
  if (!r.variation || !r.own_variation) return nullptr;
  return json{{"own_variance", r.own_variation->variance},
              {"own_df", r.own_variation->df},
              {"variance", r.variation->variance},
              {"df", r.variation->df},
              {"prior_conflict", r.prior_conflict}};
}

void read_arm_variation(const json& j, const std::string& w, ShapeRow& r) {
  if (!j.contains("arm_variation") || j["arm_variation"].is_null()) return;
  const json& v = object_field(j, "arm_variation", w);
  const std::string where = w + ".arm_variation";
  auto non_negative = [&](const char* key) {
    double x = field<double>(v, key, where);
    if (!(x >= 0)) throw Error(where + ": field '" + key + "' must be >= 0");
    return x;
  };
  r.own_variation = ArmVariation{non_negative("own_variance"), non_negative("own_df")};
  r.variation = ArmVariation{non_negative("variance"), non_negative("df")};
  r.prior_conflict = v.contains("prior_conflict") && field<bool>(v, "prior_conflict", where);
}

json to_json(const ShapeRow& r) {
  json arms = json::array();
  for (const auto& a : r.arms) arms.push_back(to_json(a));
  json j = to_json(static_cast<const ShapeEstimate&>(r));
  j.update(json{{"shape", r.shape},
                {"label", r.label},
                {"params", r.params},
                {"timing", r.timing},
                {"drift", opt_json(r.drift)},
                {"drift_ci", opt_json(r.drift_ci)},
                {"arm_variation", arm_variation_json(r)},
                {"throttled_arms", r.throttled_arms},
                {"reference_mhz", opt_json(r.reference_mhz)},
                {"clock_gap", opt_json(r.clock_gap)},
                {"arms", arms},
                {"sol_ns", opt_json(r.sol_ns)},
                {"sol_bound", r.sol_bound.empty() ? json() : json(r.sol_bound)},
                {"baseline_sol_fraction", opt_json(r.baseline_sol_fraction)},
                {"candidate_sol_fraction", opt_json(r.candidate_sol_fraction)}});
  return j;
}

ShapeRow shape_row_from_json(const json& j, const std::string& w) {
  ShapeRow r;
  r.shape = field<std::string>(j, "shape", w);
  r.label = field<std::string>(j, "label", w);
  // Absent in reports written before the parameters were part of them.
  if (j.contains("params")) r.params = object_field(j, "params", w);
  // Absent in reports of runs made before the timing was a choice: they timed kernels.
  r.timing = field_or<std::string>(j, "timing", w, kTimingKernel);
  static_cast<ShapeEstimate&>(r) = shape_estimate_from_json(j, w);
  r.drift = opt_number(j, "drift", w);
  // Absent in reports written before a drift widened the interval.
  if (j.contains("drift_ci")) r.drift_ci = opt_interval(j, "drift_ci", w);
  read_arm_variation(j, w, r);
  r.throttled_arms = string_array(j, "throttled_arms", w);
  r.reference_mhz = new_opt_number(j, "reference_mhz", w);
  r.clock_gap = new_opt_number(j, "clock_gap", w);
  const json& arms = array_field(j, "arms", w);
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
  s.gpus = string_array(j, "gpus", w);
  s.shapes = field<int>(j, "shapes", w);
  s.notes = string_array(j, "notes", w);
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
  p.missing = string_array(j, "missing", w);
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
  const json& ps = array_field(j, "precisions", w);
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
              {"decided_shapes", s.decided_shapes},
              {"decided_geomean", opt_json(s.decided_geomean)},
              {"decided_geomean_ci", opt_json(s.decided_geomean_ci)},
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
  // Absent in reports written before the headline's verdict rested on the decided shapes.
  if (j.contains("decided_shapes")) {
    s.decided_shapes = field<int>(j, "decided_shapes", w);
    s.decided_geomean = opt_number(j, "decided_geomean", w);
    s.decided_geomean_ci = opt_interval(j, "decided_geomean_ci", w);
  }
  s.min_speedup = extreme_from_json(j, "min_speedup", w);
  s.max_speedup = extreme_from_json(j, "max_speedup", w);
  s.baseline_total_ns = opt_number(j, "baseline_total_ns", w);
  s.candidate_total_ns = opt_number(j, "candidate_total_ns", w);
  s.summed_time_ratio = opt_number(j, "summed_time_ratio", w);
  s.summed_time_ratio_ci = opt_interval(j, "summed_time_ratio_ci", w);
  return s;
}

json to_json(const std::vector<TimingSummary>& by_timing) {
  json out = json::array();
  for (const auto& t : by_timing)
    out.push_back(json{{"timing", t.timing}, {"summary", to_json(t.summary)}});
  return out;
}

std::vector<TimingSummary> by_timing_from_json(const json& j, const std::string& w) {
  std::vector<TimingSummary> out;
  if (!j.contains("by_timing")) return out;  // reports of runs made before timings
  const json& a = array_field(j, "by_timing", w);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string where = w + ".by_timing[" + std::to_string(i) + "]";
    out.push_back({field<std::string>(a[i], "timing", where),
                   summary_from_json(object_field(a[i], "summary", where), where + ".summary")});
  }
  return out;
}

json to_json(const VariantProvenance& v) {
  const SourceIdentity& id = v.source;
  return json{{"name", v.name},
              {"requested", id.requested},
              {"kind", id.kind},
              {"commit", id.commit},
              {"source_digest", id.digest},
              {"tracked_diff_sha256", id.tracked_diff_sha256},
              {"untracked_sha256", id.untracked_sha256},
              {"plugin_sha256", v.plugin_sha256},
              {"toolchain_id", v.toolchain_id}};
}

VariantProvenance variant_provenance_from_json(const json& j, const std::string& w) {
  VariantProvenance v;
  SourceIdentity& id = v.source;
  v.name = field<std::string>(j, "name", w);
  id.requested = field<std::string>(j, "requested", w);
  id.kind = field<std::string>(j, "kind", w);
  id.commit = field<std::string>(j, "commit", w);
  id.digest = field<std::string>(j, "source_digest", w);
  id.tracked_diff_sha256 = field<std::string>(j, "tracked_diff_sha256", w);
  id.untracked_sha256 = field<std::string>(j, "untracked_sha256", w);
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
              {"schedule", abh::to_json(p.schedule)}};
}

Provenance provenance_from_json(const json& j, const std::string& w) {
  Provenance p;
  p.run_id = field<std::string>(j, "run_id", w);
  p.harness_version = field<std::string>(j, "harness_version", w);
  p.created_at = field<std::string>(j, "created_at", w);
  p.repo = field<std::string>(j, "repo", w);
  p.plugin_target = field<std::string>(j, "plugin_target", w);
  p.command = string_array(j, "command", w);
  p.worker_sha256 = field<std::string>(j, "worker_sha256", w);
  p.result_set_digest = field<std::string>(j, "result_set_digest", w);
  const json& vs = array_field(j, "variants", w);
  for (std::size_t i = 0; i < vs.size(); ++i)
    p.variants.push_back(
        variant_provenance_from_json(vs[i], w + ".variants[" + std::to_string(i) + "]"));
  const json& ms = array_field(j, "machine", w);
  for (std::size_t i = 0; i < ms.size(); ++i)
    p.machine.push_back(environment_from_json(ms[i], w + ".machine[" + std::to_string(i) + "]"));
  p.settings = measure_settings_from_json(object_field(j, "settings", w), w + ".settings");
  p.schedule = schedule_options_from_json(object_field(j, "schedule", w), w + ".schedule");
  return p;
}

}  // namespace

namespace {

// The report without its rows (an empty "shapes"), and the rows: all but a few bytes of a large
// report, made and written one at a time by report_json_text.
json report_header_json(const Report& r) {
  return json{{"schema_version", r.schema_version},
              {"stats", to_json(r.stats)},
              {"summary", to_json(r.summary)},
              {"by_timing", to_json(r.by_timing)},
              {"shapes", json::array()},
              {"speed_of_light", to_json(r.sol)},
              {"layer_summary", to_json(r.layer)},
              {"provenance", to_json(r.provenance)}};
}

std::vector<LargeArray> report_rows(const Report& r) {
  return {{"shapes", r.shapes.size(), [&r](std::size_t i) { return to_json(r.shapes[i]); }}};
}

}  // namespace

json to_json(const Report& r) {
  json j = report_header_json(r);
  for (const auto& s : r.shapes) j["shapes"].push_back(to_json(s));
  return j;
}

std::string report_json_text(const Report& r) {
  const json header = report_header_json(r);
  const std::vector<LargeArray> rows = report_rows(r);
  return splice_pretty(header, rows, large_bodies(header, rows));
}

Report report_from_json(const json& j, const std::string& where) {
  Report r;
  r.schema_version =
      schema_version(j, where, kReportSchemaVersion, "report",
                     "regenerate the report from its run directory with this version");
  r.stats = stats_options_from_json(object_field(j, "stats", where), where + ".stats");
  r.summary = summary_from_json(object_field(j, "summary", where), where + ".summary");
  r.by_timing = by_timing_from_json(j, where);
  const json& shapes = array_field(j, "shapes", where);
  for (std::size_t i = 0; i < shapes.size(); ++i)
    r.shapes.push_back(
        shape_row_from_json(shapes[i], where + ".shapes[" + std::to_string(i) + "]"));
  if (j.contains("speed_of_light"))
    r.sol = speed_of_light_from_json(object_field(j, "speed_of_light", where),
                                     where + ".speed_of_light");
  if (j.contains("layer_summary"))
    r.layer = layer_summary_from_json(j["layer_summary"], where + ".layer_summary");
  r.provenance = provenance_from_json(object_field(j, "provenance", where), where + ".provenance");
  r.notes = report_notes(r);
  return r;
}

}  // namespace abh
