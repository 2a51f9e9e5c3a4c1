// Stopping rules decide when an arm has enough samples. "stdrel" (the default) stops once there
// are >= min_samples AND >= min_time_s of measured time AND either the relative noise is
// <= max_noise, or — as nvbench's stdrel criterion does — the noise is above the target but has
// converged: it moved by less than 5 % since the sample count was half what it is now, so more
// samples would only repeat the same spread. The per-arm limit (max_time_s / max_samples) stops
// it in any case. The reason is always recorded ("noise 1.08% > 0.50% but converged ..."), so a
// reader sees which way an arm stopped. "fixed" takes exactly min_samples.
//
// Why convergence matters on a GPU: a cold-L2 GEMM on an H200 shows 0.8-3 % sample spread from
// clock and memory-system jitter that no sample count removes; without it every arm ran to its
// time limit, and 3 s of back-to-back GEMMs drove the GPU into its power cap (SM clock 1980 ->
// 1500 MHz), which is worse for the comparison than stopping.
//
// Noise is robust: 1.4826 * MAD / median (robust_noise in stats/statistics.hpp), which equals the
// relative standard deviation for normally distributed samples but is not blown up by the rare
// sample that lost its CPU to another process (one 100 ms preemption among thousands of 100 us
// samples sends the plain standard deviation past 300 %). The speedup statistics are medians too,
// so the two agree on what an outlier is.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/settings.hpp"

namespace abh::worker {

struct StopDecision {
  bool stop = false;
  std::string reason;
};

class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  // Called after every batch with all samples so far; rules may keep history between calls.
  virtual StopDecision check(const std::vector<double>& samples_ns, double measured_s) = 0;
};

std::unique_ptr<StoppingRule> make_stopping_rule(const MeasureSettings& s);
std::vector<std::string> stopping_rule_names();  // sorted

}  // namespace abh::worker
