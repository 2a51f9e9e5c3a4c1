// Input generation and the fp64 reference for the cuBLASLt plugin. The reference recomputes every
// output element in double precision from the same quantized inputs and scales cuBLASLt read, so
// the comparison isolates the GEMM (accumulation order, output rounding) from the quantization.
#include <abharness/plugin_cuda.hpp>

#include <cmath>

#include "gemm_data.hpp"

namespace cublaslt_gemm {
namespace {

constexpr int kTile = 64;  // output tile edge
constexpr int kTk = 16;    // K slice per step
constexpr int kThreads = 256;

__device__ inline float load(const void* p, Elem e, long long idx) {
  switch (e) {
    case Elem::bf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[idx]);
    case Elem::e4m3: {
      __nv_fp8_e4m3 v;
      v.__x = static_cast<const __nv_fp8_storage_t*>(p)[idx];
      return float(v);
    }
    default: {
      __nv_fp8_e5m2 v;
      v.__x = static_cast<const __nv_fp8_storage_t*>(p)[idx];
      return float(v);
    }
  }
}

__global__ void fill_kernel(void* dst, Elem e, long long count, std::uint64_t seed, int matrix,
                            float spread) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    float v = unit_value(seed, matrix, static_cast<std::uint64_t>(i)) * spread;
    switch (e) {
      case Elem::bf16:
        static_cast<__nv_bfloat16*>(dst)[i] = __float2bfloat16_rn(v);
        break;
      case Elem::e4m3:
        static_cast<__nv_fp8_storage_t*>(dst)[i] = __nv_fp8_e4m3(v).__x;
        break;
      default:
        static_cast<__nv_fp8_storage_t*>(dst)[i] = __nv_fp8_e5m2(v).__x;
        break;
    }
  }
}

__global__ void nan_kernel(__nv_bfloat16* dst, long long count) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    dst[i] = __ushort_as_bfloat16(0x7fc1);
}

__global__ void __launch_bounds__(kThreads)
    reference_kernel(OperandView a, OperandView b, const __nv_bfloat16* d, long long m, long long n,
                     long long k, unsigned long long* max_err_bits) {
  __shared__ double As[kTk][kTile];
  __shared__ double Bs[kTk][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long i0 = (long long)blockIdx.y * kTile, j0 = (long long)blockIdx.x * kTile;
  double acc[4][4] = {}, acc2[4][4] = {};
  for (long long k0 = 0; k0 < k; k0 += kTk) {
    for (int t = threadIdx.x; t < kTk * kTile; t += kThreads) {
      const int r = t / kTk, kk = t % kTk;  // consecutive threads walk K: coalesced for K-major
      const long long kg = k0 + kk;
      const long long i = i0 + r, j = j0 + r;
      As[kk][r] = (i < m && kg < k) ? double(load(a.p, a.e, offset_of(a.stride, i, kg))) *
                                          scale_at(a.scale, i, kg)
                                    : 0.0;
      Bs[kk][r] = (j < n && kg < k) ? double(load(b.p, b.e, offset_of(b.stride, j, kg))) *
                                          scale_at(b.scale, j, kg)
                                    : 0.0;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTk; ++kk) {
      double av[4], bv[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) av[r] = As[kk][ty * 4 + r];
#pragma unroll
      for (int c = 0; c < 4; ++c) bv[c] = Bs[kk][tx * 4 + c];
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const double t = av[r] * bv[c];
          acc[r][c] += t;
          acc2[r][c] = fma(t, t, acc2[r][c]);
        }
    }
    __syncthreads();
  }
  double worst = 0;
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const long long i = i0 + ty * 4 + r, j = j0 + tx * 4 + c;
      if (i >= m || j >= n) continue;
      const double got = double(__bfloat162float(d[i + j * m]));
      const double ref = acc[r][c];
      // Normalised by max(|ref|, ||a_i .* b_j||_2): relative where the result is large, and
      // relative to the natural size of a dot product of random terms where it cancels to ~0.
      const double floor = sqrt(acc2[r][c]);
      const double denom = fmax(fabs(ref), floor > 0 ? floor : 1e-300);
      double e = fabs(got - ref) / denom;
      if (!isfinite(got)) e = INFINITY;  // NaN poison left in place: an unwritten element
      worst = fmax(worst, e);
    }
  __shared__ double red_max[kThreads];
  red_max[threadIdx.x] = worst;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if ((int)threadIdx.x < s)
      red_max[threadIdx.x] = fmax(red_max[threadIdx.x], red_max[threadIdx.x + s]);
    __syncthreads();
  }
  // Non-negative doubles order like their bit patterns, so an integer max is a double max.
  if (threadIdx.x == 0)
    atomicMax(max_err_bits, static_cast<unsigned long long>(__double_as_longlong(red_max[0])));
}

int grid_for(long long count) {
  long long blocks = (count + 255) / 256;
  return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

}  // namespace

cudaError_t fill(void* dst, Elem e, long long count, std::uint64_t seed, int matrix, float spread,
                 cudaStream_t s) {
  fill_kernel<<<grid_for(count), 256, 0, s>>>(dst, e, count, seed, matrix, spread);
  return cudaGetLastError();
}

cudaError_t fill_nan(__nv_bfloat16* dst, long long count, cudaStream_t s) {
  nan_kernel<<<grid_for(count), 256, 0, s>>>(dst, count);
  return cudaGetLastError();
}

cudaError_t reference_check(const OperandView& a, const OperandView& b, const __nv_bfloat16* d,
                            long long m, long long n, long long k, RefResult* out, cudaStream_t s) {
  struct Acc {
    unsigned long long max_bits;
  };
  abh_plugin::cuda::DeviceBuffer<Acc> acc;
  cudaError_t e = abh_plugin::cuda::device_alloc(acc, sizeof(Acc));
  if (e != cudaSuccess) return e;
  Acc host{};
  e = cudaMemsetAsync(acc.get(), 0, sizeof(Acc), s);
  if (e == cudaSuccess) {
    dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
              static_cast<unsigned>((m + kTile - 1) / kTile));
    reference_kernel<<<grid, kThreads, 0, s>>>(a, b, d, m, n, k, &acc.get()->max_bits);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(&host, acc.get(), sizeof(Acc), cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) return e;
  double mx;
  static_assert(sizeof mx == sizeof host.max_bits);
  __builtin_memcpy(&mx, &host.max_bits, sizeof mx);
  out->max_err = mx;
  return cudaSuccess;
}

}  // namespace cublaslt_gemm
