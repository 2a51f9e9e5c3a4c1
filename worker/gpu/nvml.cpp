// NVML telemetry without nvml.h: the build machine has no NVML header, so the few stable C entry
// points used here are declared by hand and resolved with dlsym from the driver's
// libnvidia-ml.so.1. Every value comes from NVML; when NVML is absent or a query fails the snapshot
// says `available=false` and why.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>

#include "gpu/cuda_owner.hpp"
#include "gpu/gpu_session.hpp"
#include "gpu/nvml.hpp"
#include "system/text.hpp"

namespace abh::worker::gpu {
namespace {

// From nvml.h (stable since NVML 2.x / driver 285): return codes are ints, devices are opaque.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr int kClockSm = 1;                        // NVML_CLOCK_SM
constexpr int kClockMem = 2;                       // NVML_CLOCK_MEM
constexpr int kTempGpu = 0;                        // NVML_TEMPERATURE_GPU

// nvmlClocksEventReasons (formerly ClocksThrottleReasons) bits.
struct ReasonBit {
  unsigned long long bit;
  const char* name;
  bool slows;  // a slowdown that invalidates timing (not idle / app clocks / display)
};
constexpr ReasonBit kReasons[] = {
    {0x1ULL, "gpu_idle", false},
    {0x2ULL, "applications_clocks_setting", false},
    {0x4ULL, "sw_power_cap", true},
    {0x8ULL, "hw_slowdown", true},
    {0x10ULL, "sync_boost", false},
    {0x20ULL, "sw_thermal_slowdown", true},
    {0x40ULL, "hw_thermal_slowdown", true},
    {0x80ULL, "hw_power_brake_slowdown", true},
    {0x100ULL, "display_clock_setting", false},
};

struct Nvml {
  Library lib;
  std::string why;  // non-empty: unavailable
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*handle_by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  // Asked with no room for the list (infos = nullptr), so its struct's layout, which changed
  // between the versions, is never read: only the count.
  nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned*, void*) = nullptr;
  bool initialised = false;

  template <typename F>
  bool bind(F& fn, const char* name) {
    fn = reinterpret_cast<F>(::dlsym(lib.get(), name));
    if (!fn) why = std::string("libnvidia-ml.so.1 lacks ") + name;
    return fn != nullptr;
  }

  std::string text(nvmlReturn_t r) const {
    const char* s = error_string ? error_string(r) : nullptr;
    return s ? s : "NVML error " + std::to_string(r);
  }

  Nvml() {
    lib = open_library("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = ::dlerror();
      why = std::string("cannot load libnvidia-ml.so.1 (no NVIDIA driver here?): ") +
            (e ? e : "unknown dlopen error");
      return;
    }
    if (!bind(init, "nvmlInit_v2") || !bind(shutdown, "nvmlShutdown") ||
        !bind(error_string, "nvmlErrorString") ||
        !bind(driver_version, "nvmlSystemGetDriverVersion") ||
        !bind(handle_by_uuid, "nvmlDeviceGetHandleByUUID") ||
        !bind(clock_info, "nvmlDeviceGetClockInfo") ||
        !bind(temperature, "nvmlDeviceGetTemperature") ||
        !bind(power_usage, "nvmlDeviceGetPowerUsage"))
      return;
    // Renamed in driver 535; both names have the same signature and bit meanings.
    event_reasons = reinterpret_cast<decltype(event_reasons)>(
        ::dlsym(lib.get(), "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!event_reasons && !bind(event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons")) return;
    // Optional: without it a snapshot says nothing of other processes (compute_processes -1).
    for (const char* name :
         {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
          "nvmlDeviceGetComputeRunningProcesses"})
      if (!compute_processes)
        compute_processes = reinterpret_cast<decltype(compute_processes)>(::dlsym(lib.get(), name));
    nvmlReturn_t r = init();
    if (r != kNvmlSuccess) {
      why = "nvmlInit_v2: " + text(r);
      return;
    }
    initialised = true;
  }
  ~Nvml() {
    if (initialised) shutdown();
  }
};

// With no room given, NVML answers success and 0 when no process has a context on the device, or
// NVML_ERROR_INSUFFICIENT_SIZE and how many have one; -1 when it cannot tell.
int count_compute_processes(const Nvml& n, nvmlDevice_t dev) {
  if (!n.compute_processes) return -1;
  unsigned count = 0;
  const nvmlReturn_t r = n.compute_processes(dev, &count, nullptr);
  return r == kNvmlSuccess || r == kNvmlInsufficientSize ? static_cast<int>(count) : -1;
}

Nvml& nvml() {
  // NVML init costs ~20 ms: once per process, and only when telemetry is first asked for.
  static Nvml n;
  return n;
}

std::mutex& nvml_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::string nvml_driver_version(std::string* why) {
  std::lock_guard<std::mutex> lock(nvml_mutex());
  Nvml& n = nvml();
  if (!n.initialised) {
    if (why) *why = n.why;
    return "";
  }
  char buf[96] = {};
  nvmlReturn_t r = n.driver_version(buf, sizeof buf);
  if (r != kNvmlSuccess) {
    if (why) *why = "nvmlSystemGetDriverVersion: " + n.text(r);
    return "";
  }
  return buf;
}

TelemetrySnapshot read_telemetry(const std::string& gpu_uuid) {
  std::lock_guard<std::mutex> lock(nvml_mutex());
  TelemetrySnapshot s;
  Nvml& n = nvml();
  if (!n.initialised) {
    s.unavailable_reason = n.why;
    return s;
  }
  auto fail = [&](const char* call, nvmlReturn_t r) {
    s = TelemetrySnapshot{};
    s.unavailable_reason = std::string(call) + " for " + gpu_uuid + ": " + n.text(r);
    return s;
  };
  nvmlDevice_t dev = nullptr;
  if (nvmlReturn_t r = n.handle_by_uuid(gpu_uuid.c_str(), &dev); r != kNvmlSuccess)
    return fail("nvmlDeviceGetHandleByUUID", r);
  unsigned sm = 0, mem = 0, temp = 0, mw = 0;
  unsigned long long reasons = 0;
  if (nvmlReturn_t r = n.clock_info(dev, kClockSm, &sm); r != kNvmlSuccess)
    return fail("nvmlDeviceGetClockInfo(SM)", r);
  if (nvmlReturn_t r = n.clock_info(dev, kClockMem, &mem); r != kNvmlSuccess)
    return fail("nvmlDeviceGetClockInfo(MEM)", r);
  if (nvmlReturn_t r = n.temperature(dev, kTempGpu, &temp); r != kNvmlSuccess)
    return fail("nvmlDeviceGetTemperature", r);
  if (nvmlReturn_t r = n.power_usage(dev, &mw); r != kNvmlSuccess)
    return fail("nvmlDeviceGetPowerUsage", r);
  if (nvmlReturn_t r = n.event_reasons(dev, &reasons); r != kNvmlSuccess)
    return fail("nvmlDeviceGetCurrentClocksEventReasons", r);
  s.available = true;
  s.compute_processes = count_compute_processes(n, dev);
  s.sm_clock_mhz = static_cast<int>(sm);
  s.mem_clock_mhz = static_cast<int>(mem);
  s.temperature_c = static_cast<int>(temp);
  s.power_w = mw / 1000.0;
  s.throttle_reasons = reasons;
  for (const auto& b : kReasons)
    if (reasons & b.bit) s.throttle_names.emplace_back(b.name);
  return s;
}

std::string sharing_note(const Telemetry& t) {
  const int most = std::max(t.before.compute_processes, t.after.compute_processes);
  if (most <= 1) return "";
  const int others = most - 1;
  return std::to_string(others) + " other process" + (others == 1 ? "" : "es") +
         " held a CUDA context on this GPU during the arm (NVML listed " + std::to_string(most) +
         " with this worker): work of theirs would have shared the GPU with the timed kernels";
}

bool is_throttled(const TelemetrySnapshot& s) {
  if (!s.available) return false;
  for (const auto& b : kReasons)
    if (b.slows && (s.throttle_reasons & b.bit)) return true;
  return false;
}

std::pair<bool, std::string> judge_throttling(const Telemetry& t, const ClockCheck& c) {
  std::vector<std::string> slowdowns;  // reasons that slow the clock, before or after the arm
  bool beyond_power_cap = false;
  for (const TelemetrySnapshot* s : {&t.before, &t.after}) {
    if (!s->available) continue;
    for (const auto& b : kReasons) {
      if (!b.slows || !(s->throttle_reasons & b.bit)) continue;
      if (std::find(slowdowns.begin(), slowdowns.end(), b.name) == slowdowns.end())
        slowdowns.emplace_back(b.name);
      if (b.bit != 0x4ULL) beyond_power_cap = true;
    }
  }
  const std::string reported = join(slowdowns, ", ");
  if (c.floor_mhz <= 0) {
    if (slowdowns.empty()) return {false, ""};
    return {true, "the GPU reported a clock slowdown during this arm (" + reported +
                      ") and the clock floor was off, so samples may have run at any clock"};
  }
  std::string note;
  if (c.rejected > 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%d samples ran below the %d MHz clock floor and were discarded (%.2f s of "
                  "recovery pauses); every kept sample ran at full clock",
                  c.rejected, c.floor_mhz, c.recovery_s);
    note = buf;
  }
  if (!reported.empty())
    note += (note.empty() ? "" : "; ") + std::string("NVML reported ") + reported;
  if (beyond_power_cap)
    note +=
        ": a thermal or hardware slowdown can also lower the memory clock, which the clock "
        "floor does not see";
  return {beyond_power_cap, note};
}

}  // namespace abh::worker::gpu
