#include "gpu/clock_probe_kernels.hpp"

namespace abh::worker::gpu {
namespace {

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_stamp(unsigned long long* slots, int slot_count) {
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (static_cast<int>(sm) >= slot_count) return;
  const unsigned long long t = global_timer_ns();
  const unsigned long long c = clock64();
  slots[2 * sm] = t;
  slots[2 * sm + 1] = c;
}

__global__ void timer_resolution(unsigned long long* out) {
  unsigned long long smallest = ~0ull, last = global_timer_ns();
  // Eight steps of the timer, or give up after ~1M reads (a stuck timer reports 0).
  for (int steps = 0, reads = 0; steps < 8 && reads < (1 << 20); ++reads) {
    const unsigned long long now = global_timer_ns();
    if (now != last) {
      if (now - last < smallest) smallest = now - last;
      last = now;
      ++steps;
    }
  }
  unsigned n;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  out[0] = smallest == ~0ull ? 0 : smallest;
  out[1] = n;
}

}  // namespace

cudaError_t launch_clock_stamp(cudaStream_t stream, int blocks, unsigned long long* slots,
                               int slot_count) {
  clock_stamp<<<blocks, 1, 0, stream>>>(slots, slot_count);
  return cudaGetLastError();
}

cudaError_t launch_timer_resolution(cudaStream_t stream, unsigned long long* out) {
  timer_resolution<<<1, 1, 0, stream>>>(out);
  return cudaGetLastError();
}

}  // namespace abh::worker::gpu
