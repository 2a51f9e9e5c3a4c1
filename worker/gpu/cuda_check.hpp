// Error checking for CUDA runtime and CUPTI calls: every call is checked, and a failure becomes an
// abh::Error naming the call, the library's own error name and its message.
#pragma once

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <string>

#include "system/error.hpp"

namespace abh::worker::gpu {

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

inline void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw Error("CUDA: " + what + " failed: " + cuda_error_text(e));
}

inline std::string cupti_error_text(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return "CUPTI error " + std::to_string(r);
  return s;
}

inline void cupti_check(CUptiResult r, const std::string& what) {
  if (r == CUPTI_SUCCESS) return;
  std::string hint;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || r == CUPTI_ERROR_NOT_INITIALIZED)
    hint =
        " (another CUPTI client — Nsight, cuda-gdb, a profiler — may own this process: run "
        "without it, or use --timer events)";
  else if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    hint =
        " (the driver restricts GPU performance counters to admin users: see "
        "NVreg_RestrictProfilingToAdminUsers)";
  throw Error("CUPTI: " + what + " failed: " + cupti_error_text(r) + hint);
}

}  // namespace abh::worker::gpu
