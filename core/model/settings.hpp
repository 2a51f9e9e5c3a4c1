// Measurement settings: everything that changes what a worker measures. They are part of the
// plan, of every result's canonical invocation, and of the resume check.
#pragma once

#include <string>

#include "system/json_io.hpp"

namespace abh {

// The tactic setting that measures a plugin's first tactic, untuned (MeasureSettings::tactic).
inline constexpr const char* kDefaultTactic = "default";

// The longest a time setting may be (one day): a plan holds finite numbers only.
inline constexpr double kMaxSettingSeconds = 86400;
// The most samples an arm may keep: a result file holds each with its clock reading, up to about
// 30 bytes a sample on a GPU (13 on the CPU), and its reader accepts 64 MiB (a 20,000,000-sample
// CPU arm wrote 260 MB that no command could read back).
inline constexpr int kMaxSamplesLimit = 1000000;

struct MeasureSettings {
  std::string timer = "auto";  // auto | cupti | events | steady (auto: cupti on GPU, steady on CPU)
  std::string stopping = "precision";  // precision | stdrel | fixed (see worker/stopping.hpp)
  int warmup_iterations = 3;
  double warmup_min_s = 0.05;
  int min_samples = 10;
  // Wall-clock seconds of sampling before any rule may stop: an arm that stops within a few
  // milliseconds sees only the state the GPU had after its turn (a power ramp, a clock settling);
  // replayed on the H200 reference grid, 0.1 s halved the median A/A drift of stopping at once
  // (docs/method.md, "Stopping"). Wall clock, not summed kernel time, which forced 100 000
  // samples on a 2 us kernel.
  double min_time_s = 0.1;
  // precision: the target relative half-width of the median's confidence interval; 0 derives it
  // from the run's noise band (worker/stopping.hpp).
  double median_precision = 0;
  double max_noise = 0.005;  // stdrel: robust relative noise target (1.4826 * MAD / median)
  double max_time_s = 10;    // per-arm limit on measured time
  int max_samples = 100000;
  bool warm_l2 = false;        // cold L2 (flushed before each sample) unless asked
  double arm_timeout_s = 300;  // wall-clock limit per worker process
  // auto: time the plugin's tactics and keep the fastest (the tuned path); default: the plugin's
  // first tactic, untuned (for cuBLASLt the heuristic's first choice: what a caller that does not
  // tune gets); or one tactic's key.
  std::string tactic = "auto";
  // GPU arms: every sample's SM clock is recorded; a sample counts only if that clock was >=
  // clock_floor x the GPU's peak clock, and a slower one is discarded, the worker idling
  // clock_recovery_s before going on (worker/clock_guard.hpp says why). 0 keeps every sample.
  double clock_floor = 0.5;
  double clock_recovery_s = 0.05;
  // What is timed (model/timing.hpp): kernel | graph | launch. The plan's settings hold the
  // comma-separated list asked for (--timing kernel,graph); an arm's (its result's invocation)
  // the one timing of its shape.
  std::string timing = "kernel";
  bool operator==(const MeasureSettings&) const = default;
};

json to_json(const MeasureSettings& s);
MeasureSettings measure_settings_from_json(const json& j, const std::string& where);
// Rejects out-of-range values with the field name and the fix.
void validate(const MeasureSettings& s);

// The timer a plugin is measured with under `timing` (model/timing.hpp): for the kernel timing
// "auto" becomes cupti on a GPU and steady on the CPU; the graph timing is timed by "graph", the
// launch timing by "launch" (GPU plugins only). A timer that cannot time the plugin's device, or
// the timing, is refused (a UsageError naming the one to use). The worker asks this of each arm;
// the orchestrator of each variant before the plan is written.
std::string resolve_timer(const std::string& requested, bool gpu_plugin,
                          const std::string& timing = "kernel");

}  // namespace abh
