// Candidate: 64×64 output tiles staged through shared memory, each thread computing a 4×4
// register block, so every global load is reused 64 times.
#include "gemm_kernel.cuh"

namespace cuda_gemm {

constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4;

__global__ void __launch_bounds__(256)
    gemm_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float as[BK][BM];
  __shared__ float bs[BK][BN];
  const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int p0 = 0; p0 < k; p0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += blockDim.x) {
      int r = i / BK, q = i % BK;
      int gr = row0 + r, gq = p0 + q;
      as[q][r] = (gr < m && gq < k) ? a[gr * k + gq] : 0.f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += blockDim.x) {
      int q = i / BN, col = i % BN;
      int gq = p0 + q, gc = col0 + col;
      bs[q][col] = (gq < k && gc < n) ? b[gq * n + gc] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < BK; ++q) {
      float ar[TM], br[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) ar[i] = as[q][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) br[j] = bs[q][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += ar[i] * br[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) {
      int r = row0 + ty * TM + i, col = col0 + tx * TN + j;
      if (r < m && col < n) c[r * n + col] = acc[i][j];
    }
}

const char* kernel_name() {
  return "tiled-64x64x16-4x4";
}

cudaError_t launch(const float* a, const float* b, float* c, int m, int n, int k,
                   cudaStream_t stream) {
  dim3 grid((n + BN - 1) / BN, (m + BM - 1) / BM);
  gemm_tiled<<<grid, 256, 0, stream>>>(a, b, c, m, n, k);
  return cudaGetLastError();
}

}  // namespace cuda_gemm
