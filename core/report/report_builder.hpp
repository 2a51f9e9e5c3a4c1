// Builds the report (report.hpp) from the plan and the validated arm outcomes: per-arm statistics,
// per-shape speedups with their intervals, drift and verdict, the summary across shapes, speed of
// light (speed_of_light.hpp), per-layer sums (layer_summary.hpp) and provenance.
#pragma once

#include <string>
#include <vector>

#include "model/outcome.hpp"
#include "model/plan.hpp"
#include "report/report.hpp"
#include "report/speed_of_light.hpp"
#include "stats/statistics.hpp"

namespace abh {

// Computes the report. Outcomes are matched to the plan's tasks by (shape, arm); a planned arm
// without an outcome is a failed arm ("no outcome"); an outcome the plan does not contain, or two
// for one arm, is an error (validation should have refused them). A result whose correctness
// check did not pass, or that has no samples, counts as a failed arm.
//
// Speed of light and per-layer sums: see speed_of_light.hpp and layer_summary.hpp.
Report build_report(const Plan& plan, const std::vector<ArmOutcome>& outcomes,
                    const StatsOptions& opt, const std::string& result_set_digest,
                    const RooflineContext& roofline = {});

}  // namespace abh
