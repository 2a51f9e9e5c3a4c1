// The one function a CPU GEMM revision changes: C[m×n] = A[m×k] · B[k×n], row-major fp32.
// plugin.cpp owns the ABI, the data and the verification; a kernel file only computes.
#pragma once

#include <cstddef>

namespace cpu_gemm {
void gemm(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k);
const char* kernel_name();
}  // namespace cpu_gemm
