#include "model/settings.hpp"

#include "model/timing.hpp"
#include "system/error.hpp"

namespace abh {

json to_json(const MeasureSettings& s) {
  return json{{"timer", s.timer},
              {"stopping", s.stopping},
              {"warmup_iterations", s.warmup_iterations},
              {"warmup_min_s", s.warmup_min_s},
              {"min_samples", s.min_samples},
              {"min_time_s", s.min_time_s},
              {"median_precision", s.median_precision},
              {"max_noise", s.max_noise},
              {"max_time_s", s.max_time_s},
              {"max_samples", s.max_samples},
              {"warm_l2", s.warm_l2},
              {"arm_timeout_s", s.arm_timeout_s},
              {"tactic", s.tactic},
              {"clock_floor", s.clock_floor},
              {"clock_recovery_s", s.clock_recovery_s},
              {"timing", s.timing}};
}

MeasureSettings measure_settings_from_json(const json& j, const std::string& where) {
  MeasureSettings s;
  s.timer = field<std::string>(j, "timer", where);
  s.stopping = field<std::string>(j, "stopping", where);
  s.warmup_iterations = field<int>(j, "warmup_iterations", where);
  s.warmup_min_s = field<double>(j, "warmup_min_s", where);
  s.min_samples = field<int>(j, "min_samples", where);
  s.min_time_s = field<double>(j, "min_time_s", where);
  // Absent from plans written before the precision rule, which did not use it.
  s.median_precision = field_or<double>(j, "median_precision", where, 0.0);
  s.max_noise = field<double>(j, "max_noise", where);
  s.max_time_s = field<double>(j, "max_time_s", where);
  s.max_samples = field<int>(j, "max_samples", where);
  s.warm_l2 = field<bool>(j, "warm_l2", where);
  s.arm_timeout_s = field<double>(j, "arm_timeout_s", where);
  s.tactic = field<std::string>(j, "tactic", where);
  // Absent from plans written before the clock check existed, which measured without it.
  s.clock_floor = field_or<double>(j, "clock_floor", where, 0.0);
  s.clock_recovery_s = field_or<double>(j, "clock_recovery_s", where, 0.0);
  // Absent from plans written before the timing was a choice: they timed kernels.
  s.timing = field_or<std::string>(j, "timing", where, kTimingKernel);
  return s;
}

void validate(const MeasureSettings& s) {
  auto bad = [](const std::string& msg) { throw UsageError(msg); };
  if (s.timer != "auto" && s.timer != "cupti" && s.timer != "events" && s.timer != "steady")
    bad("--timer '" + s.timer + "': use one of auto, cupti, events, steady");
  if (s.stopping != "precision" && s.stopping != "stdrel" && s.stopping != "fixed")
    bad("--stopping '" + s.stopping + "': use precision, stdrel or fixed");
  if (s.warmup_iterations < 0) bad("--warmup must be >= 0");
  if (s.min_samples < 1) bad("--min-samples must be >= 1");
  if (s.max_samples < s.min_samples) bad("--max-samples must be >= --min-samples");
  if (s.max_samples > kMaxSamplesLimit)
    bad("--max-samples " + std::to_string(s.max_samples) + " is more than " +
        std::to_string(kMaxSamplesLimit) +
        ", the most samples a result file holds within the 64 MiB its reader accepts");
  // Finite, and within what a plan holds: JSON has no infinity or NaN (a plan holding null for
  // one could never be read back), and the worker's clock counts no further.
  auto seconds_ok = [](double x, double least) { return x >= least && x <= kMaxSettingSeconds; };
  if (!seconds_ok(s.min_time_s, 0))
    bad("--min-time must be between 0 and " +
        std::to_string(static_cast<long>(kMaxSettingSeconds)) + " seconds");
  if (!(s.median_precision >= 0 && s.median_precision < 1))
    bad("--median-precision must be in [0, 1): the target relative half-width of each arm's "
        "median interval as a fraction, e.g. 0.001 for 0.1 % (0: a tenth of --noise-band)");
  if (!(s.max_noise > 0 && s.max_noise < 1)) bad("--max-noise must be in (0, 1), e.g. 0.005");
  if (!(s.max_time_s > 0 && seconds_ok(s.max_time_s, 0)))
    bad("--max-time must be > 0 and at most " +
        std::to_string(static_cast<long>(kMaxSettingSeconds)) + " seconds");
  if (!(s.arm_timeout_s > 0 && seconds_ok(s.arm_timeout_s, 0)))
    bad("--arm-timeout must be > 0 and at most " +
        std::to_string(static_cast<long>(kMaxSettingSeconds)) + " seconds");
  if (s.tactic.empty()) bad("--tactic must not be empty (use auto)");
  if (!(s.clock_floor >= 0 && s.clock_floor < 1))
    bad("--clock-floor must be in [0, 1): a fraction of the GPU's peak SM clock, e.g. 0.97 (0: "
        "off)");
  if (!(s.clock_recovery_s >= 0 && s.clock_recovery_s <= 10))
    bad("--clock-recovery must be between 0 and 10 seconds, e.g. 0.05");
  for (const std::string& t : parse_timings(s.timing)) {
    // Graph timing is CUPTI's (the kernels of a replay), launch timing the host clock's.
    if (t == kTimingGraph && s.timer != "auto" && s.timer != "cupti")
      bad("--timing graph with --timer " + s.timer +
          ": a graph's iterations are timed from CUPTI's records of the replay; use --timer "
          "auto (or cupti)");
    if (t == kTimingLaunch && s.timer != "auto")
      bad("--timing launch with --timer " + s.timer +
          ": launch timing is the host clock from the launch call until the GPU is done; use "
          "--timer auto");
  }
}

std::string resolve_timer(const std::string& requested, bool gpu_plugin,
                          const std::string& timing) {
  if (timing != kTimingKernel) {
    if (const std::string why = timing_refusal(timing, gpu_plugin, "this"); !why.empty())
      throw UsageError(why);
    // validate() refuses another timer with these timings already.
    const bool fits = requested == "auto" || (timing == kTimingGraph && requested == "cupti");
    if (!fits)
      throw UsageError("timer '" + requested + "' cannot time the " + timing +
                       " timing: use --timer auto");
    return timing == kTimingGraph ? "graph" : "launch";
  }
  if (requested == "auto") return gpu_plugin ? "cupti" : "steady";
  if (gpu_plugin && requested == "steady")
    throw UsageError(
        "timer 'steady' cannot time an asynchronous GPU plugin: use cupti "
        "(default) or events");
  if (!gpu_plugin && requested != "steady")
    throw UsageError("timer '" + requested +
                     "' times GPU kernels but this plugin runs "
                     "on the CPU: use steady (or auto)");
  return requested;
}

}  // namespace abh
