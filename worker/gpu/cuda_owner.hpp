// One owner per CUDA resource the worker creates: a stream, an event, a device buffer, a pinned
// host buffer, and a shared library opened with dlopen (the CUDA driver, NVML). Each owner is a
// std::unique_ptr whose deleter releases the resource, made by one function that creates the
// resource and checks the call; so no resource is ever held by a raw handle, and a constructor
// that throws after creating one (a stream, then a failed allocation) releases it on the way out.
//
// Releasing never throws and its status is not checked: it runs in destructors, often while an
// exception is already on its way, and a failure there cannot change a result already measured.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include "gpu/cuda_check.hpp"

namespace abh::worker::gpu {

struct DestroyStream {
  void operator()(cudaStream_t s) const noexcept { cudaStreamDestroy(s); }
};
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, DestroyStream>;

inline Stream create_stream(unsigned flags) {
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&s, flags), "cudaStreamCreate");
  return Stream(s);
}

struct DestroyEvent {
  void operator()(cudaEvent_t e) const noexcept { cudaEventDestroy(e); }
};
using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, DestroyEvent>;

inline Event create_event() {
  cudaEvent_t e = nullptr;
  cuda_check(cudaEventCreate(&e), "cudaEventCreate");
  return Event(e);
}

struct FreeDevice {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<void, FreeDevice>;

// `what` names the allocation in the error ("cudaMalloc of the 100 MiB L2 flush buffer").
inline DeviceBuffer device_alloc(std::size_t bytes, const std::string& what) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, bytes), what);
  return DeviceBuffer(p);
}

struct FreeHost {
  void operator()(void* p) const noexcept { cudaFreeHost(p); }
};
using HostBuffer = std::unique_ptr<void, FreeHost>;

// Pinned host memory (cudaHostAlloc with `flags`, e.g. cudaHostAllocMapped).
inline HostBuffer host_alloc(std::size_t bytes, unsigned flags, const std::string& what) {
  void* p = nullptr;
  cuda_check(cudaHostAlloc(&p, bytes, flags), what);
  return HostBuffer(p);
}

struct CloseLibrary {
  void operator()(void* handle) const noexcept { ::dlclose(handle); }
};
// A dlopen handle; empty when dlopen failed (dlerror() says why).
using Library = std::unique_ptr<void, CloseLibrary>;

inline Library open_library(const char* name, int flags) {
  return Library(::dlopen(name, flags));
}

}  // namespace abh::worker::gpu
