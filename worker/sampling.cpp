#include "sampling.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "system/error.hpp"
#include "stats/statistics.hpp"
#include "stopping.hpp"

namespace abh::worker {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// What the stopping rule judges: with clocked samples, the samples moved to their median clock
// along the arm's own time-clock line (statistics.hpp), as the report will compare them; the
// spread the power controller adds by moving the clock is then not mistaken for noise.
std::vector<double> judged(const Measurement& m) {
  if (m.clock.sample_mhz.empty()) return m.samples_ns;
  std::vector<double> mhz = m.clock.sample_mhz;
  return clock_adjusted(m.samples_ns, m.clock.sample_mhz,
                        clock_slope(m.samples_ns, m.clock.sample_mhz), median(mhz));
}

std::string secs(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

}  // namespace

SampleHooks ArmWork::prepare_only() const {
  SampleHooks h;
  h.before = [p = prepare](int) { p(); };
  return h;
}

void warm_up(const ArmWork& w, const MeasureSettings& s, Measurement& m) {
  const SampleHooks hooks = w.prepare_only();
  double warm_s = 0;
  int n = 0, batch = std::max(1, s.warmup_iterations);
  while (n < s.warmup_iterations || warm_s < s.warmup_min_s) {
    for (double ns : w.timer.measure(batch, hooks, w.iteration)) warm_s += ns * 1e-9;
    n += batch;
    batch = std::min(2 * batch, kMaxBatch);
    if (n > 1000000) break;
  }
  m.warmup_iterations = n;
}

void sample_until_stopped(const ArmWork& w, const MeasureSettings& s, Measurement& m) {
  ClockCheck& clock = m.clock;
  const SampleHooks prepare_only = w.prepare_only();
  SampleHooks hooks = prepare_only;
  int max_batch = kMaxBatch;
  if (w.clock) {
    clock.peak_mhz = w.clock->peak_mhz();
    clock.timer_resolution_ns = w.clock->timer_resolution_ns();
    max_batch = std::min(max_batch, w.clock->capacity());
    hooks.before = [&](int i) {
      w.prepare();
      w.clock->open(i);
    };
    hooks.after = [&](int i) { w.clock->close(i); };
  }
  ClockGuard guard(clock.peak_mhz, s.clock_floor);
  clock.floor_mhz = guard.floor_mhz();

  auto rule = make_stopping_rule(s);
  std::vector<double>& samples = m.samples_ns;
  double measured_s = 0;
  std::vector<std::string> first_kernels;
  double sample_ns_estimate = 0;
  for (;;) {
    // Small batches while the sample count is small (the rule may stop at min_samples), then up
    // to 1/8 of what we have, so the overshoot past the stopping point stays below 12.5 %; and at
    // most ~20 ms of kernels, so that a batch that ran below the clock floor wastes little.
    int batch = std::clamp(static_cast<int>(samples.size() / 8), 1, max_batch);
    if (sample_ns_estimate > 0)
      batch = std::min(batch, std::max(1, static_cast<int>(20e6 / sample_ns_estimate)));
    if (w.clock) w.clock->reset(batch);
    std::vector<double> got = w.timer.measure(batch, hooks, w.iteration);
    std::vector<ClockReading> readings;
    if (w.clock) readings = w.clock->read(batch);
    // A reading above the GPU's peak clock is a broken probe, not a fast sample: the report would
    // move samples by it, so the arm fails instead (the timer's tick allows ~0.1 % on an H200).
    for (const ClockReading& r : readings)
      if (clock.peak_mhz > 0 && r.mhz > 1.05 * clock.peak_mhz)
        throw Error("the clock probe read " + std::to_string(static_cast<int>(r.mhz)) +
                    " MHz, above this GPU's " + std::to_string(clock.peak_mhz) +
                    " MHz peak: its stamps cannot be trusted on this GPU, so no clocks are "
                    "recorded for a comparison (please report it with `abharness doctor`)");
    std::vector<bool> keep = w.clock ? guard.admit(readings) : std::vector<bool>(got.size(), true);
    bool discarded = false;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!keep[i]) {
        discarded = true;
        continue;
      }
      samples.push_back(got[i]);
      if (w.clock) clock.sample_mhz.push_back(readings[i].mhz);
      measured_s += got[i] * 1e-9;
    }
    if (!got.empty()) sample_ns_estimate = median(got);
    // A timer checks the kernel set within one batch; this checks it across batches, so a plugin
    // that switches kernels half-way through an arm cannot mix two kernels into one median.
    std::vector<std::string> names = w.timer.kernel_names();
    if (first_kernels.empty())
      first_kernels = names;
    else if (names != first_kernels)
      throw Error("the set of kernels changed between sampling batches (first [" +
                  join(first_kernels) + "], now [" + join(names) +
                  "]): a plugin must launch the same kernels every iteration");
    if (discarded) {
      if (clock.recovery_s >= s.max_time_s) {
        if (static_cast<int>(samples.size()) >= s.min_samples) {
          m.stop_reason = "clock floor: stopped after " + secs(clock.recovery_s) +
                          " of recovery pauses with " + std::to_string(samples.size()) +
                          " samples kept, " + std::to_string(guard.rejected()) + " discarded";
          break;
        }
        throw Error("the GPU's SM clock stayed below the clock floor of " +
                    std::to_string(guard.floor_mhz()) + " MHz (" + std::to_string(s.clock_floor) +
                    " of its " + std::to_string(clock.peak_mhz) + " MHz peak): " +
                    std::to_string(guard.rejected()) + " samples discarded, only " +
                    std::to_string(samples.size()) + " kept after " + secs(clock.recovery_s) +
                    " of recovery pauses. Its clocks may be locked lower or it is throttling "
                    "(see `abharness doctor`); measure anyway with a lower --clock-floor, or 0 "
                    "to keep every sample");
      }
      // Idle so the power controller can raise the clock, then one untimed sample so the next
      // batch does not start from an idle-lowered clock.
      const auto t0 = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::duration<double>(s.clock_recovery_s));
      clock.recovery_s +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      w.timer.measure(1, prepare_only, w.iteration);
    }
    StopDecision d = rule->check(judged(m), measured_s);
    if (d.stop) {
      m.stop_reason = (w.clock ? "clock-adjusted " : "") + d.reason;
      break;
    }
  }
  clock.rejected = guard.rejected();
  m.measured_time_s = measured_s;
  m.noise = robust_noise(judged(m));
  m.kernel_names = w.timer.kernel_names();
}

}  // namespace abh::worker
