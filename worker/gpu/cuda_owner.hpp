// One owner per CUDA resource the worker creates: a stream, an event, a device buffer, a pinned
// host buffer, a graph and its executable instance, a stream capture in progress, and a shared
// library opened with dlopen (the CUDA driver, NVML). Each owner is a
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

struct DestroyGraph {
  void operator()(cudaGraph_t g) const noexcept { cudaGraphDestroy(g); }
};
using Graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, DestroyGraph>;

struct DestroyGraphExec {
  void operator()(cudaGraphExec_t g) const noexcept { cudaGraphExecDestroy(g); }
};
using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, DestroyGraphExec>;

inline GraphExec instantiate_graph(cudaGraph_t graph) {
  cudaGraphExec_t e = nullptr;
  cuda_check(cudaGraphInstantiate(&e, graph, 0), "cudaGraphInstantiate");
  return GraphExec(e);
}

// A capture of `stream` into a graph, begun on construction. end() ends it and owns the graph; a
// capture left open (an exception between the two) is ended, and its graph dropped, on the way
// out, so that the stream is usable again.
class StreamCapture {
 public:
  explicit StreamCapture(cudaStream_t stream) : stream_(stream) {
    // Global: an unsafe call (a synchronization, an allocation) from any thread while the capture
    // runs fails instead of being silently left out of the graph.
    cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal),
               "cudaStreamBeginCapture");
  }
  ~StreamCapture() {
    if (!stream_) return;
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream_, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();  // the invalidated capture's error is the one already on its way
  }
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;
  Graph end() {
    cudaGraph_t g = nullptr;
    const cudaStream_t s = stream_;
    stream_ = nullptr;
    cuda_check(cudaStreamEndCapture(s, &g),
               "cudaStreamEndCapture (the capture was invalidated: an iteration synchronized, "
               "allocated or launched work the capture cannot hold)");
    if (!g) throw Error("CUDA: cudaStreamEndCapture returned no graph");
    return Graph(g);
  }

 private:
  cudaStream_t stream_;
};

struct CloseLibrary {
  void operator()(void* handle) const noexcept { ::dlclose(handle); }
};
// A dlopen handle; empty when dlopen failed (dlerror() says why).
using Library = std::unique_ptr<void, CloseLibrary>;

inline Library open_library(const char* name, int flags) {
  return Library(::dlopen(name, flags));
}

}  // namespace abh::worker::gpu
