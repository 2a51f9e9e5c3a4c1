// Shared by the host code and the CUDA kernels of the cuBLASLt plugin: how inputs are generated
// (a counter-based hash, so the host can recompute any element without copying matrices back) and
// how the reference kernels are launched.
//
// Storage: D is M x N column-major bf16, D[i + j*M] = sum_k A(i, k) * B(k, j). Each operand is
// stored K-major (A as [M, K] row-major, B as [N, K] row-major: the TN layout, the only one fp8
// has on sm_90) or, for bf16 only, outer-major (A as [K, M], B as [K, N] row-major); an
// OperandStride says which (docs/grids.md, "The layout convention", names the four layouts).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace cublaslt_gemm {

enum class Elem : int { bf16 = 0, e4m3 = 1, e5m2 = 2 };

// Scale modes of one operand (what the reference applies; cuBLASLt gets the matching attribute).
enum class ScaleMode : int { none = 0, tensor = 1, vec128 = 2, blk128 = 3 };

struct ScaleView {
  ScaleMode mode = ScaleMode::none;
  float scalar = 1.f;        // tensor
  const float* p = nullptr;  // vec128 / blk128, device or host pointer
  long long ld = 0;          // vec128: padded outer size; blk128: padded K-block count
};

// Where element (outer, k) of an operand lives: offset = outer * outer_stride + k * k_stride.
// K-major: {K, 1}; outer-major: {1, outer size}.
struct OperandStride {
  long long outer = 0;
  long long k = 1;
};

__host__ __device__ inline long long offset_of(OperandStride s, long long outer, long long k) {
  return outer * s.outer + k * s.k;
}

// The scale applied to element (outer, k) of an operand whose outer dimension is M (A) or N (B).
// vec128 (1x128 blocks along K): index kb * ld + outer, outer-dimension-major as cuBLASLt wants it.
// blk128 (128x128 blocks): index (outer / 128) * ld + kb.
__host__ __device__ inline float scale_at(const ScaleView& s, long long outer, long long k) {
  switch (s.mode) {
    case ScaleMode::tensor:
      return s.scalar;
    case ScaleMode::vec128:
      return s.p[(k / 128) * s.ld + outer];
    case ScaleMode::blk128:
      return s.p[(outer / 128) * s.ld + k / 128];
    default:
      return 1.f;
  }
}

__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) with 24 random bits: full-mantissa data, never zeros (zeros run faster).
__host__ __device__ inline float unit_value(std::uint64_t seed, int matrix, std::uint64_t index) {
  std::uint64_t h = mix64(seed * 0x100000001b3ull ^ (std::uint64_t(matrix) << 56) ^ index);
  return float(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

// The stored low-precision element and its exact value as a float.
__host__ __device__ inline float quantized(Elem e, float v) {
  switch (e) {
    case Elem::bf16:
      return __bfloat162float(__float2bfloat16_rn(v));
    case Elem::e4m3:
      return float(__nv_fp8_e4m3(v));
    default:
      return float(__nv_fp8_e5m2(v));
  }
}

// Element scale: fp8 data is spread over more of its range than [-1, 1) so that subnormals are
// rare; bf16 needs none.
inline constexpr float kFp8Spread = 8.0f;

// Kernels (reference.cu).
cudaError_t fill(void* dst, Elem e, long long count, std::uint64_t seed, int matrix, float spread,
                 cudaStream_t s);
cudaError_t fill_nan(__nv_bfloat16* dst, long long count, cudaStream_t s);

// Error of one element: |D - ref| / max(|ref|, sqrt(sum_k (a_ik b_jk)^2)), ref in fp64.
struct RefResult {
  double max_err = 0;  // over all elements; inf when D holds NaN/inf (e.g. an unwritten element)
};
// fp64 reference over the whole output, from the same device inputs cuBLASLt read.
// One operand as the reference reads it: data, element type, scales and storage.
struct OperandView {
  const void* p = nullptr;
  Elem e = Elem::bf16;
  ScaleView scale;
  OperandStride stride;
};
cudaError_t reference_check(const OperandView& a, const OperandView& b, const __nv_bfloat16* d,
                            long long m, long long n, long long k, RefResult* out, cudaStream_t s);

}  // namespace cublaslt_gemm
