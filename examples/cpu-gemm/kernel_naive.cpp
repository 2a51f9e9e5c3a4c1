// The baseline revision of the example: textbook i-j-k GEMM. The inner loop walks a column of B
// (stride n), so every step misses the cache on large shapes.
#include <cstring>

#include "gemm_kernel.hpp"

namespace cpu_gemm {

const char* kernel_name() {
  return "naive-ijk";
}

void gemm(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k) {
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (std::size_t p = 0; p < k; ++p) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
}

}  // namespace cpu_gemm
