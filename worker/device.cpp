// The devices this worker build has: the host CPU always, the GPU (worker/gpu/) only when the
// CUDA toolkit was found at build time. This is the one file of the worker that asks.
#include "device.hpp"

#include "l2_flush_method.hpp"

#ifdef ABH_WITH_CUDA
#include "gpu/cuda_device.hpp"
#endif

namespace abh::worker {
namespace {

TelemetrySnapshot no_telemetry() {
  TelemetrySnapshot t;
  t.unavailable_reason = "CPU plugin: no GPU telemetry";
  return t;
}

// A CPU plugin's enqueue runs synchronously on the host: nothing to open, flush, clock or wait
// for. Its arms keep whatever the host's caches hold (the result says l2_flushed false).
class CpuSession final : public DeviceSession {
 public:
  CpuSession() : environment_(probe_host()) {}
  const Environment& environment() const override { return environment_; }
  TimerContext timer_context() const override { return {}; }
  std::int64_t l2_flush_bytes() const override { return 0; }
  std::string l2_flush_method() const override { return "none"; }
  void flush_l2() override {}
  double free_memory_bytes() override { return 0; }
  TelemetrySnapshot telemetry() override { return no_telemetry(); }
  std::unique_ptr<SampleClock> sample_clock(int) override { return nullptr; }
  std::pair<bool, std::string> judge_throttling(const Telemetry&,
                                                const ClockCheck&) const override {
    return {false, ""};
  }
  void synchronize() override {}

 private:
  Environment environment_;
};

class CpuDevice final : public Device {
 public:
  Environment probe(const std::string&) const override { return probe_host(); }
  std::unique_ptr<DeviceSession> open(const std::string&) const override {
    return std::make_unique<CpuSession>();
  }
  TelemetrySnapshot telemetry(const std::string&) const override { return no_telemetry(); }
  bool is_throttled(const TelemetrySnapshot&) const override { return false; }
};

}  // namespace

const Device& cpu_device() {
  static const CpuDevice cpu;
  return cpu;
}

const Device* gpu_device() {
#ifdef ABH_WITH_CUDA
  return &gpu::cuda_device();
#else
  return nullptr;
#endif
}

}  // namespace abh::worker
