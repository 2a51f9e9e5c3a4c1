// Stopping rules decide when an arm has enough samples (C4). "stdrel" (the default) stops once
// there are >= min_samples AND >= min_time_s of measured time AND the relative noise is
// <= max_noise, or when the per-arm limit (max_time_s / max_samples) is reached — and then says
// so. "fixed" takes exactly min_samples.
//
// Noise is robust: 1.4826 * MAD / median, which equals the relative standard deviation for
// normally distributed samples but is not blown up by the rare sample that lost its CPU to
// another process (one 100 ms preemption among thousands of 100 us samples sends the plain
// standard deviation past 300 %). The speedup statistics are medians too, so the two agree on
// what an outlier is.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "settings.hpp"

namespace abh::worker {

struct StopDecision {
  bool stop = false;
  std::string reason;
};

class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  virtual StopDecision check(const std::vector<double>& samples_ns, double measured_s) const = 0;
};

std::unique_ptr<StoppingRule> make_stopping_rule(const MeasureSettings& s);
double robust_noise(const std::vector<double>& v);

}  // namespace abh::worker
