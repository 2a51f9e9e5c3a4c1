// NVML helpers shared by the GPU session (driver version) and telemetry. NVML is reached through
// dlopen("libnvidia-ml.so.1") because the build machine has no nvml.h; when it cannot be reached
// the callers get the reason, never invented values.
#pragma once

#include <string>

namespace abh::worker::gpu {

// The driver's version string (e.g. "580.159.04"), or "" with `why` set when NVML is unavailable.
std::string nvml_driver_version(std::string* why);

}  // namespace abh::worker::gpu
