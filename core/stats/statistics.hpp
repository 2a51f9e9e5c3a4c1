// Statistics, as pure math on vectors of samples: no files, no plan, no results. The report builder
// (report/report_builder.hpp) and the worker's stopping rule feed these functions with each arm's
// raw samples; docs/statistics.md explains every quantity for a reviewer.
//
// Conventions. Times are nanoseconds. A speedup is baseline time / candidate time, so a value above
// 1 means the candidate is faster. "A" arms measure the baseline, "B" arms the candidate; drift is
// last A / first A (for A1,B,A2: A2/A1), i.e. how much the baseline itself moved during the shape.
//
// Reproducibility. Every random draw comes from std::mt19937_64 (its output sequence is fixed by
// the C++ standard) through distributions written out here (those of <random> are
// implementation-defined), seeded from StatsOptions::seed and the shape id. The same samples and
// options give bit-identical intervals with any standard library on the same C math library; a
// libm that rounds log/pow differently in the last bit can change individual replicates, never
// their distribution.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/stats_options.hpp"
#include "stats/arm_variation.hpp"

namespace abh {

struct Interval {
  double lo = 0;
  double hi = 0;
  bool operator==(const Interval&) const = default;
};

// The verdict on one ratio. "failed" is only ever given to a shape with a failed or missing arm;
// classify() never returns it.
enum class Verdict { faster, slower, same, ambiguous, unstable, failed };
std::string to_string(Verdict v);
Verdict verdict_from_string(const std::string& s);  // throws on an unknown name
std::vector<Verdict> all_verdicts();

// --- Descriptive statistics --------------------------------------------------------------------

// Median of `v`, reordering it (no copy: the bootstrap calls this millions of times). Throws when
// empty. For an even count it is the mean of the two middle values.
double median_in_place(std::span<double> v);
// The same on a copy, for callers that keep their samples in order.
double median(std::vector<double> v);

// A robust centre and spread: the median and 1.4826 * MAD (the median absolute deviation from
// the median). 1.4826 makes the spread equal the standard deviation for normally distributed data;
// unlike the standard deviation, a few wild values (a preempted sample, an outlying residual)
// hardly move it. Throws when empty.
struct RobustSpread {
  double median = 0;
  double sigma = 0;  // 1.4826 * MAD
};
RobustSpread robust_spread(std::span<const double> v);
// Robust relative noise of samples: 1.4826 * MAD / median. It is what the worker's stopping rule
// judges and what a report shows as an arm's noise; infinite for fewer than two samples (no spread
// can be judged yet).
double robust_noise(std::span<const double> v);
// Drift of a shape: the last baseline arm's median over the first one's (for A1, B, A2: A2 / A1),
// given the baseline (A) arms' medians in execution order; absent with fewer than two A arms.
std::optional<double> drift(std::span<const double> baseline_medians);
// Sample standard deviation (n - 1) divided by the mean; 0 for fewer than two samples.
double relative_stddev(std::span<const double> v);
// Quantile of sorted data with linear interpolation between order statistics (Hyndman-Fan type 7,
// the default of R and NumPy). q in [0, 1].
double quantile_sorted(std::span<const double> sorted, double q);
// The central `confidence` interval of bootstrap replicates (percentile method). Sorts `reps`.
Interval percentile_interval(std::vector<double>& reps, double confidence);

// --- Random numbers ----------------------------------------------------------------------------

// The distributions are written out here (not taken from <random>, whose distributions are
// implementation-defined) so that a seed means the same draws everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // Uniform integer in [0, n), without modulo bias: draws that fall in the incomplete last block
  // of 2^64 are rejected and redrawn.
  std::uint64_t below(std::uint64_t n);
  // Uniform double in the open interval (0, 1), from the top 53 bits of one draw.
  double uniform();
  double normal();                  // standard normal (Marsaglia's polar method)
  double gamma(double shape);       // Gamma(shape, 1), shape > 0 (Marsaglia-Tsang)
  double beta(double a, double b);  // Beta(a, b), a, b >= 1
  double chi_square(double df);     // chi-square with df > 0 degrees of freedom: 2 Gamma(df / 2)

 private:
  std::mt19937_64 engine_;
};

// The median of a bootstrap resample of `sorted` (ascending, non-empty): the same distribution as
// drawing sorted.size() values with replacement and taking their median, in O(1) instead of
// O(n). Why it is the same: a draw with replacement is sorted[floor(n * U)] with U uniform, floor
// is monotone, so the k-th smallest of n draws is sorted[floor(n * U(k))] where U(k), the k-th
// smallest of n uniforms, is Beta(k, n + 1 - k). An even count also needs U(k+1): given U(k) = u,
// it is u + (1 - u) * V with V, the smallest of the n - k uniforms above u rescaled, Beta(1, n -
// k). tests/unit/test_statistics.cpp checks it against literal resampling.
double resampled_median(std::span<const double> sorted, Rng& rng);

// Seed of an independent stream for `key` (a shape id): a shape's interval does not depend on
// which other shapes are in the sweep or in which order. FNV-1a of the key mixed with SplitMix64.
std::uint64_t stream_seed(std::uint64_t seed, std::string_view key);

// --- Clock normalization -----------------------------------------------------------------------
//
// A GPU at its power cap runs each sample at a clock the power controller picks, and that clock
// wanders from arm to arm (an H200 under bf16 GEMMs: 1380-1530 MHz between arms of one revision,
// which moved their medians by up to 3.4 %). Each sample's SM clock is recorded (the worker's
// clock probe), so the clock's effect can be measured and removed: within one arm, log(time) is
// regressed on log(clock); the slope is about -1 for a compute-bound kernel (time ~ 1/clock), about
// 0 for a memory-bound one, in between for a mixed one, and it is fitted, not assumed. Every sample
// is then moved along that line to a reference clock common to all arms of the shape. The result
// is what locking the clocks (nvidia-smi -lgc) would give, without touching the GPU's settings:
// docs/statistics.md says what it means for a candidate that draws more power.

// The least-squares slope of log(ns) on log(mhz), refitted once without the samples whose
// residual is beyond 5 robust standard deviations (a preempted sample must not tilt the line),
// and kept within [-1, 0]: a time can at most scale as 1 / clock (all of it in SM cycles) and
// cannot grow with the clock, so a slope beyond is noise: it came out -1.47 and +0.17 on
// memory-bound arms whose clock hardly moved (1826-1830 MHz). 0 when the clock did not vary
// (nothing to fit) or fewer than 3 samples. Sizes must match.
double clock_slope(std::span<const double> ns, std::span<const double> mhz);
// ns[i] * (ref_mhz / mhz[i])^slope: each sample at the reference clock.
std::vector<double> clock_adjusted(std::span<const double> ns, std::span<const double> mhz,
                                   double slope, double ref_mhz);

// --- Per-shape ratio ---------------------------------------------------------------------------

// Stage one of a shape's interval: the arms' medians, the sample-level bootstrap of each variant's
// mean of medians, and the shape's own between-arm estimate. Stage two (bootstrap_ratio below)
// needs the other shapes' estimates, so the report computes stage one for every shape first.
struct ArmBootstrap {
  double baseline_ns = 0;   // mean of the A arms' medians
  double candidate_ns = 0;  // mean of the B arms' medians
  int baseline_arms = 0, candidate_arms = 0;
  // Replicate r of each variant's mean of medians, from resampled samples only.
  std::vector<double> rep_baseline_ns, rep_candidate_ns;
  ArmVariation own;
  std::uint64_t stream = 0;
};

// Each replicate resamples every arm's samples with replacement (same count, through
// resampled_median) and recomputes each arm's median; the spread of an arm's replicate medians is
// its sampling variance. Throws when an arm list or an arm is empty or a median is not positive.
ArmBootstrap bootstrap_arms(const std::vector<std::vector<double>>& a_arms,
                            const std::vector<std::vector<double>>& b_arms, const StatsOptions& opt,
                            std::uint64_t stream);

// Speedup of one shape and its bootstrap distribution.
struct RatioEstimate {
  double baseline_ns = 0;   // mean of the A arms' medians
  double candidate_ns = 0;  // mean of the B arms' medians
  double ratio = 0;         // baseline_ns / candidate_ns
  Interval ci;
  ArmVariation own;        // the shape's own between-arm estimate
  ArmVariation variation;  // moderated with the prior: what the interval used
  // Replicate r's baseline and candidate time, between-arm draws included. Kept so that
  // aggregates over shapes can be bootstrapped by combining replicate r of every shape (shapes
  // are measured independently).
  std::vector<double> rep_baseline_ns, rep_candidate_ns;
};

// Point estimate: mean(median(a) for a in a_arms) / mean(median(b) for b in b_arms). Interval: two
// levels. Replicate r takes stage one's resampled means and multiplies each variant's by
// exp(sigma / sqrt(k) * Z * sqrt(nu / X)), k that variant's arms, Z standard normal (one per
// variant), X chi-square with nu = the moderated df (one per replicate, shared by both variants:
// the uncertainty of sigma itself), sigma^2 the moderated variance: a Student t draw of the mean
// of k arm offsets. The interval is the percentile interval of the replicate ratios. The
// between-arm draws come from their own stream, so the sample level is unchanged by them. With
// no between-arm degrees of freedom at all (nu = 0) no draw is added: the caller must say so.
RatioEstimate bootstrap_ratio(const ArmBootstrap& arms, const ArmVariation& prior,
                              const StatsOptions& opt);
// Both stages for one shape with a given prior (none by default: the shape's own arms only).
RatioEstimate bootstrap_ratio(const std::vector<std::vector<double>>& a_arms,
                              const std::vector<std::vector<double>>& b_arms,
                              const StatsOptions& opt, std::uint64_t stream,
                              const ArmVariation& prior = {});

// --- Across shapes -----------------------------------------------------------------------------

struct AggregateEstimate {
  int shapes = 0;
  double geomean = 0;  // exp(mean(log(speedup)))
  Interval geomean_ci;
  double baseline_total_ns = 0;  // sum of per-shape baseline times
  double candidate_total_ns = 0;
  double summed_ratio = 0;  // baseline_total_ns / candidate_total_ns: a whole-model figure
  Interval summed_ratio_ci;
};

// Combines shapes' estimates (all made with the same number of resamples). Throws on none.
AggregateEstimate aggregate(const std::vector<const RatioEstimate*>& shapes,
                            const StatsOptions& opt);

// --- Verdict -----------------------------------------------------------------------------------

// faster when the whole interval lies above 1 + band, slower when it lies below 1 - band, same
// when it lies inside the band, ambiguous otherwise (the interval straddles a band edge: more
// samples or a quieter machine are needed to decide). With a drift beyond the band, `ci` must be
// the drift-widened interval (below): a verdict it still supports stands, and ambiguous becomes
// unstable, the drift being what keeps the shape from a verdict. A drift within the band (or none)
// does not enter.
Verdict classify(const Interval& ci, std::optional<double> drift, double band);

// A one-block shape whose baseline drifted (A1 and A2 differ): the baseline during the candidate's
// arm could have been anywhere between its arms, so the interval is widened to what it would be
// with the baseline taken as its fastest arm at the low end and its slowest at the high end:
// [lo * min / mean, hi * max / mean] over the baseline arms' medians (the speedup's numerator is
// their mean). A 3.1x speedup whose A2 drifted 2.3 % from A1 stays faster; a 1.5 % speedup under
// a 3 % drift does not. Throws on no medians.
Interval drift_widened(const Interval& ci, std::span<const double> baseline_medians);

}  // namespace abh
