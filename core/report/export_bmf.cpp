// Bencher Metric Format (https://bencher.dev/docs/reference/bencher-metric-format/): one
// benchmark per compared shape, named by its plan id, with three measures:
//   latency           the candidate's time (ns): the mean of its arms' medians, as the report's
//                     candidate column; bounds: the lowest and highest arm median, when it has
//                     more than one arm (one arm has no spread to show, so no bounds), over the
//                     arms that count (one left out as disturbed is in neither);
//   baseline-latency  the same for the baseline;
//   speedup           baseline / candidate time, bounded by the report's confidence interval.
// Bencher keys its history by benchmark and measure, so `latency` tracks the candidate revision
// (on a main-branch job, the commit being measured). Failed shapes have no number and are left
// out, and said so.
#include <algorithm>

#include "report/export.hpp"

namespace abh {
namespace {

json metric(double value, const std::vector<double>& spread) {
  json m = {{"value", value}};
  if (spread.size() > 1) {
    const auto [lo, hi] = std::minmax_element(spread.begin(), spread.end());
    m["lower_value"] = *lo;
    m["upper_value"] = *hi;
  }
  return m;
}

std::vector<double> arm_medians(const ShapeRow& row, const std::string& variant) {
  std::vector<double> medians;
  for (const ArmStats& a : row.arms)
    if (a.counts() && a.variant == variant) medians.push_back(a.median_ns);
  return medians;
}

}  // namespace

Export export_bmf(const Report& r, const std::vector<ArmOutcome>&) {
  Export out;
  json doc = json::object();
  for (const ShapeRow* p : compared_rows(r, out.notes)) {
    const ShapeRow& row = *p;
    doc[row.shape] = {
        {"latency", metric(*row.candidate_ns, arm_medians(row, "candidate"))},
        {"baseline-latency", metric(*row.baseline_ns, arm_medians(row, "baseline"))},
        {"speedup",
         {{"value", *row.speedup}, {"lower_value", row.ci->lo}, {"upper_value", row.ci->hi}}}};
  }
  out.text = doc.dump(2) + "\n";
  return out;
}

}  // namespace abh
