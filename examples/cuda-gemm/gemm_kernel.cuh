// The one function a CUDA GEMM revision changes: launches C[m×n] = A[m×k] · B[k×n] (row-major
// fp32) on `stream`. plugin.cu owns the ABI, the buffers and the verification.
#pragma once

#include <cuda_runtime.h>

namespace cuda_gemm {
cudaError_t launch(const float* a, const float* b, float* c, int m, int n, int k,
                   cudaStream_t stream);
const char* kernel_name();
}  // namespace cuda_gemm
