// Baseline: one thread per output element, every operand read straight from global memory.
#include "gemm_kernel.cuh"

namespace cuda_gemm {

__global__ void gemm_naive(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (int p = 0; p < k; ++p) acc += a[row * k + p] * b[p * n + col];
  c[row * n + col] = acc;
}

const char* kernel_name() {
  return "naive-16x16";
}

cudaError_t launch(const float* a, const float* b, float* c, int m, int n, int k,
                   cudaStream_t stream) {
  dim3 block(16, 16), grid((n + 15) / 16, (m + 15) / 16);
  gemm_naive<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
  return cudaGetLastError();
}

}  // namespace cuda_gemm
