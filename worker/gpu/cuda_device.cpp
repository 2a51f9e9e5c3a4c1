#include "gpu/cuda_device.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "clock_guard.hpp"
#include "exit_error.hpp"
#include "gpu/clock_probe.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_owner.hpp"
#include "gpu/gpu_session.hpp"
#include "gpu/nvml.hpp"
#include "system/error.hpp"

namespace abh::worker::gpu {
namespace {

void require_usable_gpu() {
  std::string why;
  if (!cuda_available(&why))
    throw ExitError(worker_protocol::kUnsupported, "no usable GPU: " + why);
}

// The driver calls that tell whether this process holds a CUDA context, reached through the
// driver library that cuInit mapped, so that the worker does not link the driver itself.
struct DriverContexts {
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*primary_state)(CUdevice, unsigned*, int*) = nullptr;
  CUresult (*get_current)(CUcontext*) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;

  DriverContexts() {
    Library driver = open_library("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!driver)
      throw Error("the CUDA driver library is not mapped after cuInit: " +
                  std::string(::dlerror()));
    bind(driver, device_get, "cuDeviceGet");
    bind(driver, primary_state, "cuDevicePrimaryCtxGetState");
    bind(driver, get_current, "cuCtxGetCurrent");
    bind(driver, set_current, "cuCtxSetCurrent");
    // The runtime keeps the library mapped when `driver` closes its handle.
  }

  // The context this process has, described ("" for none): a primary context active on a device
  // it sees, or a context current on this thread.
  std::string describe() const {
    int n = 0;
    cuda_check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    for (int i = 0; i < n; ++i) {
      CUdevice dev = 0;
      unsigned flags = 0;
      int active = 0;
      check(device_get(&dev, i), "cuDeviceGet(" + std::to_string(i) + ")");
      check(primary_state(dev, &flags, &active), "cuDevicePrimaryCtxGetState");
      if (active) return "the primary context of device " + std::to_string(i) + " is active";
    }
    CUcontext ctx = nullptr;
    check(get_current(&ctx), "cuCtxGetCurrent");
    if (ctx) return "a context is current on the main thread";
    return "";
  }

  // After cudaDeviceReset the thread still names the primary context, now inactive, as its
  // current one (seen on the H200, driver 580): it names none after this.
  void clear_current() const { check(set_current(nullptr), "cuCtxSetCurrent(NULL)"); }

 private:
  template <typename F>
  static void bind(const Library& driver, F& fn, const char* name) {
    fn = reinterpret_cast<F>(::dlsym(driver.get(), name));
    if (!fn) throw Error(std::string("the CUDA driver lacks ") + name);
  }
  // A driver call that fails leaves the question open: that is an error, not "no context".
  static void check(CUresult r, const std::string& what) {
    if (r != CUDA_SUCCESS)
      throw Error(what + " failed (CUresult " + std::to_string(static_cast<int>(r)) +
                  ") while checking whether this process holds a CUDA context");
  }
};

// The session is opened before the GPU is probed: the probe then sees the context the arm runs
// in.
class CudaSession final : public DeviceSession {
 public:
  explicit CudaSession(const std::string& selector)
      : session_(selector, l2_flush_method_from_env()), environment_(probe(selector)) {}

  const Environment& environment() const override { return environment_; }
  TimerContext timer_context() const override { return {session_.stream(), session_.device()}; }
  std::int64_t l2_flush_bytes() const override { return session_.flush_bytes(); }
  std::string l2_flush_method() const override {
    return std::string(l2_flush_method_name(session_.flush_method()));
  }
  void flush_l2() override { session_.flush_l2(); }
  double free_memory_bytes() override { return session_.free_memory_bytes(); }
  TelemetrySnapshot telemetry() override { return read_telemetry(environment_.gpu->uuid); }
  // Every GPU sample is clocked (worker/clock_guard.hpp says why).
  std::unique_ptr<SampleClock> sample_clock(int capacity) override {
    return std::make_unique<ClockProbe>(session_.device(), session_.stream(), capacity);
  }
  std::pair<bool, std::string> judge_throttling(const Telemetry& t,
                                                const ClockCheck& c) const override {
    auto judged = gpu::judge_throttling(t, c);
    for (const std::string& more : {sharing_note(t), above_peak_note(c.above_peak, c.peak_mhz)})
      if (!more.empty()) judged.second += (judged.second.empty() ? "" : "; ") + more;
    return judged;
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
  // loaded and initialised for the probe that follows the session's opening. A context that
  // already exists here (a Python module that touched the GPU when it was imported, a plugin's
  // static initialiser) would sit on the GPU beside the arm being measured: refused.
  void prepare() const override {
    require_usable_gpu();
    if (const std::string made = DriverContexts().describe(); !made.empty())
      throw ExitError(worker_protocol::kUnsupported,
                      "this worker was started ahead of its turn, and the plugin already created "
                      "a CUDA context before it (" +
                          made +
                          "): it would run beside the arm being measured. Create CUDA state in "
                          "make_problem, not when the module or library is loaded, or run with "
                          "--start-ahead 0");
    std::string why;
    (void)nvml_driver_version(&why);
  }
  // cudaDeviceReset destroys the primary context of the worker's one visible GPU, with every
  // allocation, stream and module in it; the check after it is the one made before a session
  // opens (on the H200: inactive, and NVML then lists no process of ours on the GPU). A context a
  // plugin created with the driver API and left uncurrent is not seen: plugins use the runtime's
  // primary context (include/abharness/plugin.h).
  bool release(std::string* why) const override {
    if (const cudaError_t e = cudaDeviceReset(); e != cudaSuccess) {
      *why = "cudaDeviceReset: " + cuda_error_text(e);
      return false;
    }
    try {
      const DriverContexts contexts;
      contexts.clear_current();
      if (const std::string left = contexts.describe(); !left.empty()) {
        *why = left + " after cudaDeviceReset";
        return false;
      }
    } catch (const std::exception& e) {
      *why = e.what();
      return false;
    }
    return true;
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
