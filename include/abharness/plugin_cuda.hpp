/* Optional C++ owners for the CUDA resources of a plugin (header-only, C++17, needs the CUDA
 * runtime headers): device memory held by a std::unique_ptr that frees it, so a problem that
 * fails half-way through create() releases what it already allocated, and the text of a CUDA
 * error for the plugin's message. Error handling stays the plugin's: allocation returns the
 * cudaError_t for the plugin to turn into its status and message.
 *
 *   abh_plugin::cuda::DeviceBuffer<float> a;
 *   if (cudaError_t e = abh_plugin::cuda::device_alloc(a, n); e != cudaSuccess) ...
 */
#ifndef ABHARNESS_PLUGIN_CUDA_HPP
#define ABHARNESS_PLUGIN_CUDA_HPP

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

namespace abh_plugin {
namespace cuda {

/* Frees device memory; never throws (it runs in destructors, status unchecked). */
struct FreeDevice {
  void operator()(void* p) const noexcept { cudaFree(p); }
};

/* Device memory of T (void: untyped bytes), freed with its owner. */
template <typename T = void>
using DeviceBuffer = std::unique_ptr<T, FreeDevice>;

/* Allocates `bytes` on the current device into `out` (which then owns them); on failure `out`
 * is left as it was and the error is returned. */
template <typename T>
cudaError_t device_alloc(DeviceBuffer<T>& out, std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaSuccess) out.reset(static_cast<T*>(p));
  return e;
}

/* "cudaErrorMemoryAllocation (out of memory)": the error's name and its description. */
inline std::string error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

}  // namespace cuda
}  // namespace abh_plugin

#endif
