// Stopping rules decide when an arm has enough samples. Every rule first waits for min_samples and
// min_time_s of sampling (wall clock), and every rule stops at the per-arm limits (max_samples, or
// max_time_s of measured time once min_samples are in).
//
// "precision" (the default) stops once the arm's median is known precisely enough for the
// comparison: the relative half-width of its distribution-free confidence interval
// (stats/median_interval.hpp, at the run's confidence) is at most a target. The target is
// --median-precision when given, else kBandFraction of the run's noise band: the sampling error of
// an arm's median then takes at most a tenth of the band, so it can neither make a verdict nor
// hide one, and the report's interval, which also carries how whole arms differ, is not limited by
// it. Why not the samples' spread: no count of samples lowers a spread. A sub-microsecond CPU
// shape with 12 % spread ran every arm to the 100 000-sample cap under a 0.5 % noise target, while
// its median was known to a fraction of the band after a few thousand. Why not summed time: a
// 2 us GPU kernel needed 100 000 samples for 0.2 s of kernel time, a 1 ms one 200, whatever either
// needed.
//
// It also stops, short of its target, when the interval narrows so slowly that the arm's limits
// would come first (kSlowNarrowing); the reason says how fast it narrowed and what was reached.
//
// "stdrel" stops once the relative noise is <= max_noise, or — as nvbench's stdrel criterion
// does — the noise is above the target but has converged: it moved by less than 5 % since the
// sample count was half what it is now. "fixed" takes exactly min_samples.
//
// Noise is robust: 1.4826 * MAD / median (robust_noise in stats/statistics.hpp), which equals the
// relative standard deviation for normally distributed samples but is not blown up by the rare
// sample that lost its CPU to another process. The reason is always recorded, in words
// (stop_reason) and as evidence (StopEvidence, with the median's interval whichever rule decided).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/result.hpp"
#include "model/settings.hpp"
#include "model/stats_options.hpp"

namespace abh::worker {

// The precision rule gives up on its target when the median's interval narrows far more slowly
// than 1/sqrt(n), 0.71 per doubling of the samples: at most kSlowNarrowing per doubling over the
// last fourfold (from kNarrowingFrom samples on), with the target out of reach within the arm's
// limits at that rate. On the H200 the m=1 reference GEMM rotates 8 buffer sets whose medians
// differ by up to 15 % (62-72 us): the arm's median sits between modes, and such arms ran to the
// 100,000-sample cap (10 s each) with their median still at +-1.2 %, a precision that the
// spread between whole processes of that shape (3 %) swamps anyway. Ties at
// the timer's tick (an interval one tick wide that collapses to a point later), a point interval
// fourfold before, and an interval that widened (samples that moved during the arm: a loaded
// CPU's once went from a point to +-6.3 %) are not slow narrowing and are left to the limits.
inline constexpr double kSlowNarrowing = 0.84;
inline constexpr int kNarrowingFrom = 256;

// What the comparison must resolve: the statistics options the run decides with (the plan's
// schedule.decision).
struct StoppingGoal {
  double noise_band = 0.01;
  double confidence = 0.95;
  // > 0: stop after this many seconds of sampling (wall clock) whatever the rule says. A warm-up
  // arm's (kWarmUpArmWallS), whose samples are not evidence.
  double wall_limit_s = 0;
  // The timer's tick in ns (0: finer than anything measured). An interval no wider than a tick
  // either side is one of ties, which resolve all at once (see kSlowNarrowing).
  double resolution_ns = 0;
  // A candidate arm: the median of its shape's baseline arms measured before it (0: none, or a
  // baseline arm), and of their median SM clocks (0: unknown). See far_precision_target.
  double reference_ns = 0;
  double reference_mhz = 0;
  // The slow-narrowing test's limits: the constants above in every arm; fields so that
  // bench/replay_stopping can try others on the samples of recorded arms.
  double slow_narrowing = kSlowNarrowing;
  int narrowing_from = kNarrowingFrom;
};

// A warm-up arm warms the machine and the plugin for the arms after it; its samples are thrown
// away, so it need not reach the rule's precision. Uncapped, the first warm-up of the
// microsecond grid on the H200 sampled 37,265 times for 8.3 s (docs/measurements.md §40). On a
// GPU what carries over to the next arm's process is done before sampling starts (a Triton
// kernel's compilation into its cache, the driver's and the page cache's first loads) and the
// SM clock rises within milliseconds, so a GPU warm-up samples a quarter second; a CPU's caches
// and frequency are what a host warm-up warms, so it keeps the second.
inline constexpr double kWarmUpArmWallS = 1.0;
inline constexpr double kWarmUpArmWallGpuS = 0.25;

// The target half-width: --median-precision, or kBandFraction x the band.
double precision_target(const MeasureSettings& s, const StoppingGoal& g);

// The precision a candidate arm's median needs when it lies far from its shape's baseline
// (`reference_ns`): a quarter of its distance beyond the band's edge (log scale), at most half the
// band, at least `target`. Its sampling error then cannot carry the comparison across the edge,
// and the report's interval, which resamples each arm's samples, widens by what it leaves.
// Why: Triton kernels of 1.7-2.1 us, 8-13x faster than their eager baseline and timed through 32 ns
// ticks, took 15,807-100,000 samples (the cap) for a +-0.1 % median on the H200, up to 5.2 s of
// sampling in a 52 s A/B/A, for verdicts that +-0.5 % (1,000-2,700 samples) decides as well
// (docs/measurements.md). An A/A arm, or a change near the band, keeps `target`.
// `clock_ratio` is the arm's median SM clock over its reference's (1 when either is unknown): the
// part of the distance that it could explain does not count, since a time scales at most as
// 1/clock. Each judged median is at its own arm's clock, and on the power-capped H200 the A/A
// candidate arms of compute-bound GEMMs ran 3-7 % off their baseline's clock, lay that far from it,
// and stopped at the relaxed target after 80-96 samples inside the clock's ramp: in all four blocks
// of one shape they read 0.8 % slower than their identical baseline (docs/measurements.md §48).
double far_precision_target(double target, double band, double median_ns, double reference_ns,
                            double clock_ratio = 1);

// How far sampling has come.
struct Progress {
  double measured_s = 0;  // the kept samples' sum (what max_time_s limits)
  double wall_s = 0;      // since the first timed sample (what min_time_s asks for)
  double median_mhz = 0;  // the kept samples' median SM clock; 0 without clocks or reference
};

struct StopDecision {
  bool stop = false;
  StopCause cause = StopCause::precision;
  std::string reason;
  // While going on: the samples the rule expects to need in all, 0 when it cannot tell; the
  // sampling loop sizes its next batch so that it overshoots the stopping point little.
  long wanted = 0;
};

class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  // Called after every batch with all samples so far; rules may keep history between calls.
  virtual StopDecision check(const std::vector<double>& samples_ns, const Progress& p) = 0;
  virtual std::string name() const = 0;
  virtual std::optional<double> target() const { return std::nullopt; }
};

std::unique_ptr<StoppingRule> make_stopping_rule(const MeasureSettings& s, const StoppingGoal& g);
std::vector<std::string> stopping_rule_names();  // sorted

// The evidence of a decision: the median's interval over `judged` at the goal's confidence.
StopEvidence stop_evidence(const StoppingRule& rule, StopCause cause,
                           const std::vector<double>& judged, const StoppingGoal& g);

}  // namespace abh::worker
