#include "sampling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include "stats/statistics.hpp"
#include "stats/tick_ties.hpp"
#include "stopping.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh::worker {
namespace {

std::string sampling_secs(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

// The hooks around a timed sample: the L2 flush, and with a clock the stamps on either side.
SampleHooks sample_hooks(const ArmWork& w) {
  SampleHooks hooks = w.prepare_only();
  if (!w.clock) return hooks;
  hooks.before = [&w](int i) {
    w.prepare();
    w.clock->open(i);
  };
  hooks.after = [&w](int i) { w.clock->close(i); };
  return hooks;
}

// Appends the samples of a batch that the clock guard kept, with their clocks when clocked, and
// adds their time to `measured_s`.
void keep_samples(const std::vector<double>& got, const std::vector<ClockReading>& readings,
                  const std::vector<bool>& keep, bool clocked, Measurement& m, double& measured_s) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (!keep[i]) continue;
    m.samples_ns.push_back(got[i]);
    if (clocked) m.clock.sample_mhz.push_back(readings[i].mhz);
    measured_s += got[i] * 1e-9;
  }
}

// A timer checks the kernel set within one batch; this checks it across batches, so a plugin
// that switches kernels half-way through an arm cannot mix two kernels into one median.
void check_same_kernels(std::vector<std::string>& first, const std::vector<std::string>& now) {
  if (first.empty())
    first = now;
  else if (now != first)
    throw Error("the set of kernels changed between sampling batches (first [" + join(first, ", ") +
                "], now [" + join(now, ", ") +
                "]): a plugin must launch the same kernels every iteration");
}

// After a batch that lost samples to the clock floor: idles so the power controller can raise
// the clock, then runs one untimed sample so the next batch does not start from an idle-lowered
// clock. Once max_time_s went to such pauses, the arm stops if it kept min_samples and fails
// otherwise. True: stop sampling.
bool recover_clock(const ArmWork& w, const MeasureSettings& s, const ClockGuard& guard,
                   Measurement& m) {
  ClockCheck& clock = m.clock;
  const size_t kept = m.samples_ns.size();
  if (clock.recovery_s >= s.max_time_s) {
    if (static_cast<int>(kept) >= s.min_samples) {
      m.stop_reason = "clock floor: stopped after " + sampling_secs(clock.recovery_s) +
                      " of recovery pauses with " + std::to_string(kept) + " samples kept, " +
                      std::to_string(guard.rejected()) + " discarded";
      return true;
    }
    throw Error("the GPU's SM clock stayed below the clock floor of " +
                std::to_string(guard.floor_mhz()) + " MHz (" + std::to_string(s.clock_floor) +
                " of its " + std::to_string(clock.peak_mhz) +
                " MHz peak): " + std::to_string(guard.rejected()) + " samples discarded, only " +
                std::to_string(kept) + " kept after " + sampling_secs(clock.recovery_s) +
                " of recovery pauses. Its clocks may be locked lower or it is throttling "
                "(see `abharness doctor`); measure anyway with a lower --clock-floor, or 0 "
                "to keep every sample");
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(s.clock_recovery_s));
  clock.recovery_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  w.timer.measure(1, w.prepare_only(), w.iteration);
  return false;
}

}  // namespace

std::vector<double> judged_samples(const Measurement& m) {
  std::vector<double> untied = spread_ties(m.samples_ns, m.clock.timer_resolution_ns);
  if (m.clock.sample_mhz.empty()) return untied;
  return clock_adjusted(untied, m.clock.sample_mhz, clock_slope(m.samples_ns, m.clock.sample_mhz),
                        median(m.clock.sample_mhz));
}

long samples_before_check(long n, const MeasureSettings& s, long wanted, double least_fraction) {
  long step = std::max(1L, n / 4);
  if (n < s.min_samples)
    step = s.min_samples - n;
  else if (wanted > 0)
    step = std::min(step, std::max({wanted - n, static_cast<long>(least_fraction * n), 1L}));
  return std::max(1L, std::min(step, s.max_samples - n));
}

double check_step_fraction(double judge_s, double sample_s) {
  if (!(judge_s > 0) || !(sample_s > 0)) return 1.0 / 32;
  return std::clamp(std::sqrt(2 * judge_s / sample_s), 1.0 / 32, 1.0 / 4);
}

int batch_size(long due, int max_batch, double sample_ns_estimate) {
  long batch = due;
  if (sample_ns_estimate > 0)
    batch = std::min(batch, std::max(1L, static_cast<long>(20e6 / sample_ns_estimate)));
  return static_cast<int>(std::clamp(batch, 1L, static_cast<long>(max_batch)));
}

int next_warmup_batch(int last, long done, double elapsed_s, double min_s) {
  long next = std::min(2L * last, static_cast<long>(kMaxBatch));
  const double left = min_s - elapsed_s;
  if (left > 0 && done > 0 && elapsed_s > 0)
    next = std::min(next, static_cast<long>(std::ceil(left / (elapsed_s / done))));
  return static_cast<int>(std::max(1L, next));
}

SampleHooks ArmWork::prepare_only() const {
  SampleHooks h;
  h.before = [p = prepare](int) { p(); };
  return h;
}

void warm_up(const ArmWork& w, const MeasureSettings& s, Measurement& m) {
  const SampleHooks hooks = w.prepare_only();
  const auto started = std::chrono::steady_clock::now();
  auto warm_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  int n = 0, batch = std::max(1, s.warmup_iterations);
  while (n < s.warmup_iterations || warm_s() < s.warmup_min_s) {
    w.timer.measure(batch, hooks, w.iteration);
    n += batch;
    batch = next_warmup_batch(batch, n, warm_s(), s.warmup_min_s);
    if (n > 1000000) break;
  }
  m.warmup_iterations = n;
}

JudgingEffort sample_until_stopped(const ArmWork& w, const MeasureSettings& s,
                                   const StoppingGoal& goal, Measurement& m) {
  ClockCheck& clock = m.clock;
  int max_batch = kMaxBatch;
  if (w.clock) {
    clock.peak_mhz = w.clock->peak_mhz();
    clock.timer_resolution_ns = w.clock->timer_resolution_ns();
    max_batch = std::min(max_batch, w.clock->capacity());
  } else {
    clock.timer_resolution_ns = w.timer.tick_ns();
  }
  const SampleHooks hooks = sample_hooks(w);
  ClockGuard guard(clock.peak_mhz, s.clock_floor);
  clock.floor_mhz = guard.floor_mhz();

  StoppingGoal ticked = goal;
  ticked.resolution_ns = clock.timer_resolution_ns;
  auto rule = make_stopping_rule(s, ticked);
  Progress progress;
  const auto started = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  // A limit the rule stops at is not overrun by more than one batch between checks.
  auto limit_reached = [&] {
    return progress.measured_s >= s.max_time_s ||
           (goal.wall_limit_s > 0 && seconds_since(started) >= goal.wall_limit_s);
  };
  std::vector<std::string> first_kernels;
  double sample_ns_estimate = 0;
  long wanted = 0;
  double step_fraction = check_step_fraction(0, 0);
  double sampling_s = 0;
  long taken = 0;
  JudgingEffort effort;
  for (;;) {
    // Sample: batches until the next check is due, a limit is reached or the clock floor
    // discarded samples.
    long due =
        samples_before_check(static_cast<long>(m.samples_ns.size()), s, wanted, step_fraction);
    bool discarded = false;
    do {
      const auto batch_started = std::chrono::steady_clock::now();
      const int batch = batch_size(due, max_batch, sample_ns_estimate);
      if (w.clock) w.clock->reset(batch);
      std::vector<double> got = w.timer.measure(batch, hooks, w.iteration);
      std::vector<ClockReading> readings;
      if (w.clock) readings = clock_per_sample(*w.clock, w.timer, got.size());
      // Only the floor's discards call for a pause: a reading above the peak was the timer's.
      const int below_floor = guard.rejected();
      std::vector<bool> keep =
          w.clock ? guard.admit(readings) : std::vector<bool>(got.size(), true);
      keep_samples(got, readings, keep, w.clock != nullptr, m, progress.measured_s);
      discarded = guard.rejected() > below_floor;
      check_same_kernels(first_kernels, w.timer.kernel_names());
      sampling_s += seconds_since(batch_started);
      if (got.empty()) break;
      sample_ns_estimate = median(got);
      taken += static_cast<long>(got.size());
      due -= static_cast<long>(got.size());
    } while (due > 0 && !discarded && !limit_reached());
    if (discarded && recover_clock(w, s, guard, m)) {
      m.stop = stop_evidence(*rule, StopCause::clock_floor, judged_samples(m), goal);
      break;
    }
    // Judge: every sample kept, as the report will compare them.
    progress.wall_s = seconds_since(started);
    // Only a candidate with a clocked reference compares clocks (far_precision_target).
    if (goal.reference_mhz > 0 && !m.clock.sample_mhz.empty())
      progress.median_mhz = median(m.clock.sample_mhz);
    const auto judging_started = std::chrono::steady_clock::now();
    const std::vector<double> samples = judged_samples(m);
    StopDecision d = rule->check(samples, progress);
    const double judging_s = seconds_since(judging_started);
    ++effort.checks;
    effort.seconds += judging_s;
    if (d.stop) {
      m.stop_reason = (w.clock ? "clock-adjusted " : "") + d.reason;
      m.stop = stop_evidence(*rule, d.cause, samples, goal);
      break;
    }
    wanted = d.wanted;
    if (!samples.empty() && taken > 0)
      step_fraction = check_step_fraction(judging_s / static_cast<double>(samples.size()),
                                          sampling_s / static_cast<double>(taken));
  }
  clock.rejected = guard.rejected();
  clock.above_peak = guard.above_peak();
  m.measured_time_s = progress.measured_s;
  m.noise = robust_noise(judged_samples(m));
  m.kernel_names = w.timer.kernel_names();
  return effort;
}

}  // namespace abh::worker
