// The worker's GPU side, compiled only when the CUDA toolkit is found (worker/device.cpp). One
// worker process holds one GpuSession: a fresh CUDA context and CUPTI state per arm.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "l2_flush_method.hpp"
#include "model/environment.hpp"
#include "model/result.hpp"

namespace abh::worker::gpu {

// True when a CUDA device can be used; otherwise `why` says what is missing (no driver, no GPU).
bool cuda_available(std::string* why);

// Describes the GPU named by `selector` (an index like "0" or a UUID "GPU-..."), with driver,
// runtime and CUPTI versions.
Environment probe(const std::string& selector);

class GpuSession {
 public:
  // Selects the device, creates a stream and the L2 flush of `flush`'s method.
  GpuSession(const std::string& selector, L2FlushMethod flush);
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  int device() const;
  void* stream() const;  // cudaStream_t
  void synchronize();
  // Empties the L2 with the session's flush method on its stream (outside any timed window) and
  // resets persisting L2 lines.
  void flush_l2();
  std::int64_t flush_bytes() const;  // of each buffer the flush writes or reads: >= 2x the L2
  // How flush_l2 empties the L2 (l2_flush_method.hpp).
  L2FlushMethod flush_method() const;
  // cudaMemGetInfo's free bytes on the session's device.
  double free_memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// NVML telemetry through dlopen("libnvidia-ml.so.1"); `available=false` with a reason when NVML
// cannot be reached — never fabricated values.
TelemetrySnapshot read_telemetry(const std::string& gpu_uuid);
// True when a snapshot shows a slowdown that invalidates timing (thermal, power, HW slowdown).
bool is_throttled(const TelemetrySnapshot& s);
// Whether an arm's samples are suspect, and a note saying why. With the clock floor on, a power
// cap only cost discarded samples (every kept one ran at full clock), so only thermal and
// hardware slowdowns flag the arm; without it, any slowdown NVML reported does.
std::pair<bool, std::string> judge_throttling(const Telemetry& t, const ClockCheck& c);
// When another process held a CUDA context on the GPU at either reading, a note saying how many;
// else "". A context alone costs the timed kernels nothing, so the arm is noted, not flagged.
std::string sharing_note(const Telemetry& t);

}  // namespace abh::worker::gpu
