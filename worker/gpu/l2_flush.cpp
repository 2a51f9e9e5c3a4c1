#include "gpu/l2_flush.hpp"

#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/l2_flush_kernels.hpp"

namespace abh::worker::gpu {
namespace {

// Every byte of the buffer a read pass reads: its 16-byte words XOR to 0 or to 0x01010101 per
// thread, never to kNever, so the pass's one store never happens.
constexpr int kReadFill = 0x01;
constexpr unsigned kNever = 0xffffffffu;

bool uses_memset(L2FlushMethod m) {
  return m != L2FlushMethod::read;
}
bool uses_read(L2FlushMethod m) {
  return m == L2FlushMethod::read || m == L2FlushMethod::memset_read;
}

std::string mib(std::int64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

L2Flush::L2Flush(L2FlushMethod method, int device, std::int64_t bytes, cudaStream_t stream)
    : method_(method), bytes_(bytes) {
  const std::string name(l2_flush_method_name(method));
  cudaDeviceProp p{};
  cuda_check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  if (method == L2FlushMethod::memset_discard && p.major < 8)
    throw UsageError("L2 flush method " + name + " needs discard.global.L2 (compute capability " +
                     "8.0 or newer); this GPU is " + p.name + " (" + std::to_string(p.major) + "." +
                     std::to_string(p.minor) + "): choose another method");
  blocks_ = p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / 256);
  const auto size = static_cast<size_t>(bytes);
  if (uses_memset(method))
    written_ =
        device_alloc(size, "cudaMalloc of the " + mib(bytes) + " L2 flush buffer (" + name + ")");
  if (uses_read(method)) {
    read_ = device_alloc(size,
                         "cudaMalloc of the " + mib(bytes) + " L2 read-pass buffer (" + name + ")");
    sink_ = device_alloc(sizeof(unsigned), "cudaMalloc of the L2 read pass's output word");
    cuda_check(cudaMemsetAsync(read_.get(), kReadFill, size, stream),
               "cudaMemsetAsync (L2 read-pass buffer)");
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (L2 read-pass buffer)");
  }
}

void L2Flush::memset(cudaStream_t stream) {
  // A changing byte value keeps every write a real write.
  const int value = static_cast<int>(counter_++ % 251u) + 1;
  cuda_check(cudaMemsetAsync(written_.get(), value, static_cast<size_t>(bytes_), stream),
             "cudaMemsetAsync (L2 flush)");
}

void L2Flush::read_pass(cudaStream_t stream) {
  cuda_check(launch_l2_read_pass(stream, blocks_, read_.get(), static_cast<size_t>(bytes_) / 16,
                                 static_cast<unsigned*>(sink_.get()), kNever),
             "launching the L2 read pass");
}

void L2Flush::discard(cudaStream_t stream) {
  cuda_check(launch_l2_discard(stream, blocks_, written_.get(), static_cast<size_t>(bytes_)),
             "launching the L2 discard");
}

void L2Flush::run(cudaStream_t stream) {
  // Everything runs on the session stream, so it finishes before the next timed iteration starts
  // and is never inside the timed window.
  if (uses_memset(method_)) memset(stream);
  if (uses_read(method_)) read_pass(stream);
  if (method_ == L2FlushMethod::memset_discard) discard(stream);
  cuda_check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
}

}  // namespace abh::worker::gpu
