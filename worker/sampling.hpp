// The measurement loop of one arm: warm-up, then batches of timed samples until the stopping rule
// holds, with the clock floor (clock_guard.hpp) applied to every batch when the samples are
// clocked. It fills the Measurement of the result; the arm's phases (arm.cpp) set up what it
// needs.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "clock_guard.hpp"
#include "model/result.hpp"
#include "model/settings.hpp"
#include "stopping.hpp"
#include "timer.hpp"

namespace abh::worker {

// The most samples one timer call takes; a SampleClock needs stamps for this many.
inline constexpr int kMaxBatch = 1024;

// Where each sample's clock comes from: stamp kernels around it (gpu/clock_probe.hpp). A CPU arm
// has none.
class SampleClock {
 public:
  virtual ~SampleClock() = default;
  virtual int peak_mhz() const = 0;
  virtual double timer_resolution_ns() const = 0;
  virtual int capacity() const = 0;  // samples per batch it can hold
  virtual void reset(int count) = 0;
  virtual void open(int sample) = 0;
  virtual void close(int sample) = 0;
  virtual std::vector<ClockReading> read(int count) const = 0;
};

// The clock reading of each of `samples` samples the last timer.measure() gave: the reading of
// its window (Timer::sample_windows), or of the sample itself when each was timed alone.
std::vector<ClockReading> clock_per_sample(const SampleClock& clock, const Timer& timer,
                                           std::size_t samples);

struct ArmWork {
  Timer& timer;
  std::function<void()> iteration;  // the timed work: one enqueue of the plugin's problem
  std::function<void()> prepare;    // before each sample, outside the window: the L2 flush
  SampleClock* clock = nullptr;     // null: samples are not clocked
  // Hooks that only prepare each sample (warm-up, tactic tuning, re-warming): no clock stamps.
  SampleHooks prepare_only() const;
};

// At least warmup_iterations and warmup_min_s of wall time, results discarded; batches double so
// that a microsecond kernel does not pay a timer round trip per iteration. Wall time, not summed
// kernel time: what warms up (clocks, caches, a JIT) follows the time the device was kept busy,
// and 0.05 s of a 2 us kernel's time is 25 000 samples, each paying its flush and synchronisation.
void warm_up(const ArmWork& w, const MeasureSettings& s, Measurement& m);

// The warm-up's next batch after one of `last` iterations, `done` in all over `elapsed_s`: twice
// the last, but no more than the time still to go before `min_s` needs at the pace so far, so
// that the warm-up ends near its minimum rather than up to twice past it (doubling alone took
// 0.06-0.105 s, median 0.080, for the 0.05 s minimum over 80 H100 reference arms). At least 1.
int next_warmup_batch(int last, long done, double elapsed_s, double min_s);

// What the stopping rule judges, as the report will compare it: the samples with their ties at
// the timer's tick spread (tick_ties.hpp: a median between two ticks settles instead of
// flipping), and with clocked samples, moved to their median clock along the arm's own
// time-clock line (statistics.hpp), so that the spread the power controller adds by moving the
// clock is not mistaken for noise.
std::vector<double> judged_samples(const Measurement& m);

// The samples to take before the stopping rule is asked again, with `n` samples kept and the rule
// expecting to need `wanted` in all (0: it cannot tell): up to min_samples at once (no rule stops
// before them), then a quarter of what there is, so that checks come at a geometric pace; no more
// than the rule still wants, so the overshoot past its stopping point stays small, but at least
// `least_fraction` of what there is (check_step_fraction), so that an estimate a little short does
// not crawl; never past max_samples. At least 1.
long samples_before_check(long n, const MeasureSettings& s, long wanted, double least_fraction);

// The least step between two checks, as a fraction of the samples kept, that balances what the
// checks cost against what overshooting the stopping point costs. A check judges every sample
// kept (ties spread, clock fit, the median's interval: 1.0-1.2 us per sample at 12,000-100,000
// samples on a 2-core build machine), so checks every f * n samples cost about judge_s / f per
// sample in all, while stopping up to f * n samples late costs f / 2 * sample_s per sample on
// average: the sum is least at f = sqrt(2 judge_s / sample_s), kept within [1/32, 1/4]. judge_s:
// one check's seconds per sample judged; sample_s: wall seconds per sample taken. 1/32 while either
// is unknown (0).
double check_step_fraction(double judge_s, double sample_s);

// One timer call's share of the `due` samples before the next check: at most max_batch (what
// the timer and the clock's stamps hold) and ~20 ms of kernels, so that a batch that ran below
// the clock floor wastes little. At least 1.
int batch_size(long due, int max_batch, double sample_ns_estimate);

// Samples until the stopping rule holds, judged against `goal` (the run's decision options); fills
// samples_ns, clock, measured_time_s, stop_reason, stop (the rule's evidence), noise and
// kernel_names. Throws when the kernel set changes between batches or the clock floor cannot be
// met within max_time_s of recovery pauses with fewer than min_samples kept.
// What judging the samples cost, for the arm's log.
struct JudgingEffort {
  int checks = 0;
  double seconds = 0;
};
JudgingEffort sample_until_stopped(const ArmWork& w, const MeasureSettings& s,
                                   const StoppingGoal& goal, Measurement& m);

}  // namespace abh::worker
