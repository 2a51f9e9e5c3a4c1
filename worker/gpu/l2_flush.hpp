// The L2 flush of a GPU session: each method of l2_flush_method.hpp, with the buffers it needs,
// enqueued on the session's stream before a cold sample (outside its timed window).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/cuda_owner.hpp"
#include "l2_flush_method.hpp"

namespace abh::worker::gpu {

class L2Flush {
 public:
  // Allocates the method's buffers of `bytes` each on the current device and writes the one a
  // read pass reads (synchronously, on `stream`). A method the GPU cannot run is refused.
  L2Flush(L2FlushMethod method, int device, std::int64_t bytes, cudaStream_t stream);
  // Enqueues one flush on `stream` and resets persisting L2 lines.
  void run(cudaStream_t stream);
  L2FlushMethod method() const { return method_; }
  std::int64_t bytes() const { return bytes_; }

 private:
  void memset(cudaStream_t stream);
  void read_pass(cudaStream_t stream);
  void discard(cudaStream_t stream);

  L2FlushMethod method_;
  std::int64_t bytes_ = 0;
  int blocks_ = 0;        // of the read and discard kernels: enough to keep every SM busy
  DeviceBuffer written_;  // memset, memset-read, memset-discard
  DeviceBuffer read_;     // read, memset-read
  DeviceBuffer sink_;     // the read pass's never-written output word
  unsigned counter_ = 0;
};

}  // namespace abh::worker::gpu
