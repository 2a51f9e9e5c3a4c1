// Launchers of the clock-probe kernels (compiled by nvcc as C++17; worker/gpu/clock_probe.hpp
// uses them). Kept apart so that the C++20 worker code never passes through nvcc.
#pragma once

#include <cuda_runtime_api.h>

namespace abh::worker::gpu {

// Every block writes {%globaltimer, clock64()} of the SM it runs on to slots[2*smid], so that an
// opening and a closing stamp can be paired on one SM: SM cycle counters are per SM.
cudaError_t launch_clock_stamp(cudaStream_t stream, int blocks, unsigned long long* slots,
                               int slot_count);

// One thread: the smallest step of %globaltimer it sees (out[0], ns) and %nsmid (out[1], the
// bound on %smid, which need not equal the SM count).
cudaError_t launch_timer_resolution(cudaStream_t stream, unsigned long long* out);

}  // namespace abh::worker::gpu
