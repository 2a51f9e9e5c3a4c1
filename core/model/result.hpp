// One arm's result: results/<shape>/<arm>.json, written atomically by the worker that measured
// it. It carries everything provenance validation needs (docs/provenance.md) and every raw
// sample, and ends with a SHA-256 of its own payload so that any edit is detected.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/environment.hpp"
#include "model/identity.hpp"
#include "model/interpreter.hpp"
#include "model/settings.hpp"

namespace abh {

// The canonical invocation: what the worker was asked to measure, as read from the plan.
struct Invocation {
  std::string run_id;
  std::string run_nonce;  // the plan's: a result of another run never has it
  std::string shape;
  json params;
  std::string arm;
  std::string variant;
  int round = 0;
  std::string plugin_target;
  MeasureSettings settings;
  bool operator==(const Invocation&) const = default;
};

struct TelemetrySnapshot {
  bool available = false;
  std::string unavailable_reason;  // why not, when not available: never silently empty
  int sm_clock_mhz = 0;
  int mem_clock_mhz = 0;
  int temperature_c = 0;
  double power_w = 0;
  std::uint64_t throttle_reasons = 0;  // NVML clocks-event reasons bit mask
  std::vector<std::string> throttle_names;
  // Processes NVML lists with a CUDA context on the GPU, this worker's included; -1: not known
  // (no NVML, or a driver without the query). More than one means the arm shared its GPU.
  int compute_processes = -1;
};

struct Telemetry {
  TelemetrySnapshot before, after;
  bool throttled = false;  // a thermal/power/hardware slowdown was active: the arm is flagged
  std::string note;
};

// The SM clock over each sample (GPU arms), and what the clock floor discarded.
struct ClockCheck {
  int peak_mhz = 0;   // the GPU's peak SM clock; 0: not clocked (CPU plugin)
  int floor_mhz = 0;  // samples that ran below this were discarded; 0: none were
  // The tick of the samples' timer: of %globaltimer (which the clock readings divide by) on a GPU,
  // of the host's steady clock for a CPU arm (measured by the worker; 0: unknown).
  double timer_resolution_ns = 0;
  std::vector<double> sample_mhz;  // one per kept sample, in order of samples_ns
  int rejected = 0;                // samples discarded for running below floor_mhz
  // Samples discarded because the probe read their clock above the peak: the GPU's timer stepped
  // during them (worker/clock_guard.hpp). Absent in results written before: read as 0.
  int above_peak = 0;
  double recovery_s = 0;  // time spent idle so that clocks recover after a discard
};

// One phase of an arm's process and the seconds it took (worker/arm.cpp names them).
struct ArmPhase {
  std::string name;
  double seconds = 0;
  bool operator==(const ArmPhase&) const = default;
};

// Why an arm stopped sampling (worker/stopping.hpp): its median was precise enough (precision), its
// noise met the target or converged (stdrel), its median's interval narrowed too slowly to reach
// the target within the limits (precision, also converged), the fixed count was reached, a limit
// was reached, or the clock floor's recovery pauses used up the time limit.
enum class StopCause { precision, noise, converged, fixed, sample_limit, time_limit, clock_floor };
std::string to_string(StopCause c);
std::vector<std::string> stop_cause_names();

// The confidence interval of an arm's median (stats/median_interval.hpp), relative half-width and
// all: how precisely the samples pinned the median down.
struct MedianPrecision {
  double lo_ns = 0, hi_ns = 0;  // the interval's ends, order statistics of the judged samples
  double half_width = 0;        // (hi - lo) / 2 / median
  double inflation = 1;         // how much consecutive samples' dependence widened it (>= 1)
  bool operator==(const MedianPrecision&) const = default;
};

// The stopping rule's evidence at its decision, whichever rule decided: a reader sees how precise
// the median was when sampling stopped, against what target, and why it stopped.
struct StopEvidence {
  std::string rule;  // the stopping rule: precision | stdrel | fixed
  StopCause cause = StopCause::precision;
  int samples = 0;        // samples judged at the decision
  double median_ns = 0;   // their median: ties spread, clock-adjusted when clocked
  double confidence = 0;  // the level of the interval: the run's decision confidence
  std::optional<MedianPrecision> interval;  // none: too few samples for one at that level
  std::optional<double> target;             // the precision rule's target half-width
  bool operator==(const StopEvidence&) const = default;
};

json to_json(const StopEvidence& e);
StopEvidence stop_evidence_from_json(const json& j, const std::string& where);

struct Measurement {
  std::string timer;  // the timer that measured (never a silent substitute)
  std::vector<double> samples_ns;
  int warmup_iterations = 0;
  double measured_time_s = 0;
  std::string stop_reason;  // e.g. "median +-0.08% (95% CI ...) <= 0.10% target after 212 samples"
  double noise = 0;         // robust relative noise: 1.4826 * MAD / median (stats/statistics.hpp)
  std::optional<StopEvidence> stop;  // absent only in results written before it was recorded
  std::vector<std::string> kernel_names;
  bool l2_flushed = false;
  std::int64_t l2_flush_bytes = 0;
  // How the caches were prepared before each timed iteration: "flush-<method> <bytes> bytes" (a
  // buffer of >= 2 x the L2 written and/or read outside the timed window,
  // worker/l2_flush_method.hpp), "rotation <S> sets x <B> bytes" (iterations cycle through S
  // copies of the inputs and outputs, S x B >= 2 x L2), "warm" (nothing: --warm-l2, or a CPU
  // plugin). Empty in results written before it was recorded.
  std::string cache_preparation;
  std::string tactic;
  std::string tactic_choice;  // how it was chosen: "tuned over 8 candidates", "cache hit (...)",
                              // "requested", or a re-tune after a rejected cached key, with why
  double flops = 0;
  double min_bytes = 0;
  // Worker start to its first timed sample (start-up overhead), without the time it waited for its
  // turns; waited_s is that time (a worker started ahead waits while the arm before it measures).
  double ready_s = 0;
  double waited_s = 0;
  // The process's phases in order, from its start to the verification of the output (writing the
  // result and exiting come after it, and are in the arm's log only); empty in older results.
  std::vector<ArmPhase> phases;
  ClockCheck clock;
};

struct Correctness {
  bool passed = false;
  double max_rel_error = 0;
  double tolerance = 0;
  std::uint64_t checked = 0;
  std::string method;
};

// Where the worker ran (docs/method.md#where-arms-run): the CPUs the plan gave it, the measuring
// thread's affinity as read back after pinning, and every CPU that thread was seen on while it
// warmed up and sampled.
struct Placement {
  std::vector<int> cpus;      // Task::cpus as the worker read them from the plan
  std::vector<int> affinity;  // sorted; the plan's first CPU alone once pinned
  std::vector<int> seen;      // sorted, without duplicates
  bool operator==(const Placement&) const = default;
};

struct ArmResult {
  int schema_version = 0;
  std::string harness_version;
  Invocation invocation;
  std::string plan_sha256;  // of the plan.json bytes the worker read: binds the result to them
  std::string worker_sha256;
  std::string plugin_sha256;
  SourceIdentity source;
  Environment environment;
  Telemetry telemetry;
  Placement placement;
  Measurement measurement;
  Correctness correctness;
  std::optional<Interpreter> python;  // Python plugins: the interpreter the arm ran under
  std::string started_at, finished_at;
  int pid = 0;
  std::string payload_sha256;  // SHA-256 of the canonical JSON of everything above
};

json to_json(const Invocation& i);
json to_json(const TelemetrySnapshot& t);
Invocation invocation_from_json(const json& j, const std::string& where);
// Serializes without the digest; `to_json(ArmResult)` adds it.
json payload_json(const ArmResult& r);
json to_json(const ArmResult& r);
ArmResult result_from_json(const json& j, const std::string& where);
std::string payload_digest(const json& result_json);  // recomputed from a parsed file

// Fills payload_sha256 and writes <run_dir>/<rel> atomically, without following links.
void write_result(const std::filesystem::path& run_dir, const std::filesystem::path& rel,
                  ArmResult r);
ArmResult read_result(const std::filesystem::path& run_dir, const std::filesystem::path& rel);

}  // namespace abh
