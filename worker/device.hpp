// Where a plugin's work runs: the host CPU, or one GPU through CUDA. The arm's phases (arm.hpp)
// and the worker's probe and telemetry subcommands see only these interfaces; device.cpp is the
// one place in the worker that knows whether this build has the GPU side (worker/gpu/).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "model/environment.hpp"
#include "model/result.hpp"
#include "sampling.hpp"
#include "timer.hpp"

namespace abh::worker {

// One arm's hold on its device, from before the problem is created until the result is written.
class DeviceSession {
 public:
  virtual ~DeviceSession() = default;
  // The machine as the arm sees it, probed once the session was open.
  virtual const Environment& environment() const = 0;
  // The stream and device ordinal that timers and the plugin's enqueue get (none on the CPU).
  virtual TimerContext timer_context() const = 0;
  // Bytes of each buffer one L2 flush writes or reads; 0 when the worker flushes no cache on this
  // device (the CPU).
  virtual std::int64_t l2_flush_bytes() const = 0;
  // How flush_l2 evicts the L2, for the result's cache_preparation (e.g. "memset").
  virtual std::string l2_flush_method() const = 0;
  // Evicts the L2 before a sample, outside its timed window.
  virtual void flush_l2() = 0;
  // Device memory free now, in bytes (0 on the CPU): what buffer sets may use.
  virtual double free_memory_bytes() = 0;
  // Clocks, temperature, power and slowdown reasons now; unavailable, with the reason, where
  // they cannot be read.
  virtual TelemetrySnapshot telemetry() = 0;
  // The clock of each sample, for the clock floor, holding stamps for `capacity` samples per
  // batch; null when this device's samples cannot be clocked (the CPU).
  virtual std::unique_ptr<SampleClock> sample_clock(int capacity) = 0;
  // Whether an arm's samples are suspect given its telemetry and clock check, and a note why.
  virtual std::pair<bool, std::string> judge_throttling(const Telemetry& t,
                                                        const ClockCheck& c) const = 0;
  // Waits for the work queued so far; throws when any of it failed asynchronously.
  virtual void synchronize() = 0;
};

// A kind of device, for the arm and for the subcommands that describe the machine.
class Device {
 public:
  virtual ~Device() = default;
  // The machine with the device `selector` names: a GPU index ("0") or UUID ("GPU-..."); the
  // CPU ignores it.
  virtual Environment probe(const std::string& selector) const = 0;
  // Opens an arm's session on the device `selector` names; it is probed after it opened.
  virtual std::unique_ptr<DeviceSession> open(const std::string& selector) const = 0;
  // Loads and initialises the device's drivers without creating any state on the device (no
  // context): what a worker started ahead may do while another arm measures.
  virtual void prepare() const {}
  // Once every session of the process has closed: destroys what the process still holds on the
  // device (a GPU's context), so that the next arm may open its own while this process exits.
  // True when released and checked; false, with `why`, when there is nothing to release or it
  // could not be done (the next arm then waits for this process to end).
  virtual bool release(std::string* why) const {
    *why = "this device holds nothing to release";
    return false;
  }
  // The device's telemetry now, and whether it shows a slowdown that invalidates timing.
  virtual TelemetrySnapshot telemetry(const std::string& selector) const = 0;
  virtual bool is_throttled(const TelemetrySnapshot& s) const = 0;
};

// The host CPU: always there.
const Device& cpu_device();
// The GPU side, or null when this worker was built without the CUDA toolkit.
const Device* gpu_device();

}  // namespace abh::worker
