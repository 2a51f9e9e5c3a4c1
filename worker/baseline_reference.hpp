// A candidate arm's reference for its stopping rule (StoppingGoal::reference_ns in stopping.hpp):
// how fast its shape's baseline arms already written measured, so that a candidate far beyond the
// band from them needs a less precise median (far_precision_target).
#pragma once

#include <string>
#include <vector>

#include "model/plan.hpp"
#include "model/result.hpp"
#include "system/run_dir_fs.hpp"

namespace abh::worker {

struct BaselineReference {
  double ns = 0;   // the median of their judged medians; 0: none
  double mhz = 0;  // the median of their median SM clocks; 0: one of them has no clocks
  int arms = 0;    // the baseline results it was taken from
  // Results that could not be read, with why: no reference, and the orchestrator judges them.
  std::vector<std::string> unreadable;
};

// An arm's median as its stopping rule judged it (ties at the tick spread, clock-adjusted), to
// compare with another arm's judged samples; the plain median for a result without the evidence.
// The plain median of a 755 ns CPU arm sits on a 10 ns tick: 761 ns, 1.4 % from the judged median
// of an identical arm, which would have looked like a change beyond a 1 % band.
double judged_median(const Measurement& m);

// The reference that `baseline_arms` (the shape's baseline arms written so far) give.
BaselineReference reference_from(const std::vector<const Measurement*>& baseline_arms);

// The baseline results of `task`'s shape in `run` (same run nonce, same timer), none for a
// baseline arm. Regular files only: read_result follows no links.
BaselineReference baseline_reference(const Plan& plan, const Task& task, const RunDirFs& run,
                                     const std::string& timer);

}  // namespace abh::worker
