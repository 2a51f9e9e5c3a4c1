// Launchers of the L2 flush kernels (compiled by nvcc as C++17; worker/gpu/l2_flush.cpp uses
// them). Kept apart so that the C++20 worker code never passes through nvcc.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace abh::worker::gpu {

// Reads `count` 16-byte words of `words` once, through the L2 only (ld.global.cg), and writes
// nothing: a thread writes its XOR of what it read to sink[0] only when that equals `never`, which
// the caller chooses so that it cannot happen for the buffer's contents. The compiler cannot know
// that, so it keeps every load.
cudaError_t launch_l2_read_pass(cudaStream_t stream, int blocks, const void* words,
                                std::size_t count, unsigned* sink, unsigned never);

// Discards every 128-byte line of `bytes` at `p` (a multiple of 128) from the L2
// (discard.global.L2: the lines become invalid without being written back; their memory then
// holds an indeterminate value). Needs compute capability 8.0 or newer.
cudaError_t launch_l2_discard(cudaStream_t stream, int blocks, void* p, std::size_t bytes);

}  // namespace abh::worker::gpu
