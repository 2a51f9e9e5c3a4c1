#include "gpu/cuda_device.hpp"

#include "exit_error.hpp"
#include "gpu/clock_probe.hpp"
#include "gpu/gpu_session.hpp"
#include "gpu/nvml.hpp"

namespace abh::worker::gpu {
namespace {

void require_usable_gpu() {
  std::string why;
  if (!cuda_available(&why))
    throw ExitError(worker_protocol::kUnsupported, "no usable GPU: " + why);
}

// The session is opened before the GPU is probed: the probe then sees the context the arm runs
// in.
class CudaSession final : public DeviceSession {
 public:
  explicit CudaSession(const std::string& selector)
      : session_(selector), environment_(probe(selector)) {}

  const Environment& environment() const override { return environment_; }
  TimerContext timer_context() const override { return {session_.stream(), session_.device()}; }
  std::int64_t l2_flush_bytes() const override { return session_.flush_bytes(); }
  void flush_l2() override { session_.flush_l2(); }
  TelemetrySnapshot telemetry() override { return read_telemetry(environment_.gpu->uuid); }
  // Every GPU sample is clocked (worker/clock_guard.hpp says why).
  std::unique_ptr<SampleClock> sample_clock(int capacity) override {
    return std::make_unique<ClockProbe>(session_.device(), session_.stream(), capacity);
  }
  std::pair<bool, std::string> judge_throttling(const Telemetry& t,
                                                const ClockCheck& c) const override {
    return gpu::judge_throttling(t, c);
  }
  void synchronize() override { session_.synchronize(); }

 private:
  GpuSession session_;
  Environment environment_;
};

class CudaDevice final : public Device {
 public:
  Environment probe(const std::string& selector) const override {
    require_usable_gpu();
    return gpu::probe(selector);
  }
  std::unique_ptr<DeviceSession> open(const std::string& selector) const override {
    require_usable_gpu();
    return std::make_unique<CudaSession>(selector);
  }
  // cudaGetDeviceCount (in require_usable_gpu) runs cuInit, which creates no context; NVML is
  // loaded and initialised for the probe that follows the session's opening.
  void prepare() const override {
    require_usable_gpu();
    std::string why;
    (void)nvml_driver_version(&why);
  }
  TelemetrySnapshot telemetry(const std::string& selector) const override {
    const Environment e = probe(selector);
    return read_telemetry(e.gpu->uuid);
  }
  bool is_throttled(const TelemetrySnapshot& s) const override { return gpu::is_throttled(s); }
};

}  // namespace

const Device& cuda_device() {
  static const CudaDevice cuda;
  return cuda;
}

}  // namespace abh::worker::gpu
