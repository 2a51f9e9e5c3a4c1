// The tidy CSV (report.tidy.csv, docs/csv.md): one row per shape and one per arm, every value in
// its own column and the same columns whatever the schedule, so the files of several runs stack
// into one table (`pandas.concat`, `csvstack`, `cat` after the first header). Columns that do not
// apply to a row are empty. Each row names its run (run id, result-set digest, the two commits),
// its comparison (the candidate's name: several in a run of a variants file) and its shape, with
// the shapes' grid parameters as columns after the fixed ones, sorted by name.
#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_map>

#include "report/report_render.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

using fmt::csv_number;

// A parameter's value in a cell: a string as it is, anything else as compact JSON (1, 2.5, true).
std::string param_cell(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The parameter names of every shape of every report, sorted; each with its column name: the
// name itself, or "param_<name>" where a fixed column has that name.
std::vector<std::pair<std::string, std::string>> param_columns(
    const std::vector<TidyComparison>& comparisons) {
  std::set<std::string> names;
  for (const auto& c : comparisons)
    for (const auto& row : c.report->shapes)
      if (row.params.is_object())
        for (const auto& [k, v] : row.params.items()) names.insert(k);
  const auto& fixed = tidy_csv_columns();
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& n : names)
    out.emplace_back(n, std::find(fixed.begin(), fixed.end(), n) == fixed.end() ? n : "param_" + n);
  return out;
}

std::string commit_of(const Report& r, const std::string& variant) {
  for (const auto& v : r.provenance.variants)
    if (v.name == variant) return v.source.commit;
  return "";
}

std::string revision_of(const Report& r, const std::string& variant) {
  for (const auto& v : r.provenance.variants)
    if (v.name == variant) return v.source.requested;
  return "";
}

// The cells of one row by column name; the renderer lays them out in the header's order.
using Cells = std::vector<std::pair<const char*, std::string>>;

Cells shape_cells(const ShapeRow& row) {
  return {{"row", "shape"},
          {"verdict", to_string(row.verdict)},
          {"speedup", csv_number(row.speedup)},
          {"ci_lo", row.ci ? fmt::exact(row.ci->lo) : ""},
          {"ci_hi", row.ci ? fmt::exact(row.ci->hi) : ""},
          {"drift", csv_number(row.drift)},
          {"baseline_ns", csv_number(row.baseline_ns)},
          {"candidate_ns", csv_number(row.candidate_ns)},
          {"reference_mhz", csv_number(row.reference_mhz)},
          {"clock_gap", csv_number(row.clock_gap)},
          {"sol_ns", csv_number(row.sol_ns)},
          {"sol_bound", row.sol_bound},
          {"throttled", row.throttled_arms.empty() ? "false" : "true"},
          {"failure", row.failure}};
}

Cells arm_cells(const ArmStats& a) {
  Cells c = {{"row", "arm"},
             {"arm", a.arm},
             {"variant", a.variant},
             {"round", std::to_string(a.round)},
             {"throttled", a.throttled ? "true" : "false"},
             {"failure", a.failure}};
  if (!a.ok) return c;
  Cells measured = {{"median_ns", fmt::exact(a.median_ns)},
                    {"raw_median_ns", fmt::exact(a.raw_median_ns)},
                    {"min_ns", fmt::exact(a.min_ns)},
                    {"noise", fmt::exact(a.noise)},
                    {"samples", std::to_string(a.samples)},
                    {"timer", a.timer},
                    {"stop_reason", a.stop_reason},
                    {"tactic", a.tactic},
                    {"kernels", join(a.kernel_names, ";")},
                    {"tflops", csv_number(a.tflops)},
                    {"gbps", csv_number(a.gbps)},
                    {"median_mhz", csv_number(a.median_mhz)},
                    {"clock_slope", csv_number(a.clock_slope)},
                    {"sol_fraction", csv_number(a.sol_fraction)}};
  c.insert(c.end(), measured.begin(), measured.end());
  return c;
}

}  // namespace

const std::vector<std::string>& tidy_csv_columns() {
  static const std::vector<std::string> columns = {
      // The run
      "run_id", "result_set_digest", "target", "baseline_revision", "baseline_commit",
      "candidate_revision", "candidate_commit", "candidate_name",
      // The shape, and which row of it this is
      "shape", "label", "timing", "row", "arm", "variant", "round",
      // Shape rows: what was concluded
      "verdict", "speedup", "ci_lo", "ci_hi", "drift", "baseline_ns", "candidate_ns",
      "reference_mhz", "clock_gap", "sol_ns", "sol_bound",
      // Arm rows: what was measured
      "median_ns", "raw_median_ns", "min_ns", "noise", "samples", "timer", "stop_reason", "tactic",
      "kernels", "tflops", "gbps", "median_mhz", "clock_slope", "sol_fraction",
      // Both
      "throttled", "failure"};
  return columns;
}

std::string render_tidy_csv(const std::vector<TidyComparison>& comparisons) {
  const auto& fixed = tidy_csv_columns();
  const auto params = param_columns(comparisons);
  std::vector<std::string> header = fixed;
  for (const auto& p : params) header.push_back(p.second);
  std::string out = fmt::csv_row(header);
  // Each cell's column by its name: a scan of the fixed columns per cell was most of this
  // renderer's time at 50,000 shapes (perf).
  std::unordered_map<std::string_view, std::size_t> column;
  for (std::size_t i = 0; i < fixed.size(); ++i) column.emplace(fixed[i], i);
  for (const auto& [name, report] : comparisons) {
    const Report& r = *report;
    const Cells run = {{"run_id", r.provenance.run_id},
                       {"result_set_digest", r.provenance.result_set_digest},
                       {"target", r.provenance.plugin_target},
                       {"baseline_revision", revision_of(r, "baseline")},
                       {"baseline_commit", commit_of(r, "baseline")},
                       {"candidate_revision", revision_of(r, "candidate")},
                       {"candidate_commit", commit_of(r, "candidate")},
                       {"candidate_name", name}};
    auto emit = [&](const ShapeRow& row, const Cells& cells) {
      std::vector<std::string> line(header.size());
      auto put = [&](const Cells& cs) {
        for (const auto& [col, value] : cs) line[column.at(col)] = value;
      };
      put(run);
      put({{"shape", row.shape}, {"label", row.label}, {"timing", row.timing}});
      put(cells);
      for (std::size_t i = 0; i < params.size(); ++i)
        if (row.params.is_object() && row.params.contains(params[i].first))
          line[fixed.size() + i] = param_cell(row.params[params[i].first]);
      out += fmt::csv_row(line);
    };
    for (const auto& row : r.shapes) {
      emit(row, shape_cells(row));
      for (const auto& a : row.arms) emit(row, arm_cells(a));
    }
  }
  return out;
}

std::string render_tidy_csv(const Report& r, const RenderOptions&) {
  return render_tidy_csv({{"candidate", &r}});
}

}  // namespace abh
