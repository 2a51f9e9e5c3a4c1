// The GPU as a worker device (worker/device.hpp): a CUDA session per arm, NVML telemetry and the
// clock probe of each sample. Compiled only when the CUDA toolkit is found.
#pragma once

#include "device.hpp"

namespace abh::worker::gpu {

// Every call first checks that a CUDA device can be used, and throws an unsupported-request
// ExitError naming what is missing (no driver, no GPU) when none can.
const Device& cuda_device();

}  // namespace abh::worker::gpu
