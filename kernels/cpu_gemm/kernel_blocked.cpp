// Cache-blocked GEMM: tiles of B stay in L1/L2 while a strip of A streams past, and the inner
// loop runs along contiguous rows of B and C so the compiler vectorizes it.
#include <algorithm>
#include <cstring>

#include "gemm_kernel.hpp"

namespace cpu_gemm {

const char* kernel_name() {
  return "blocked-ikj-64";
}

void gemm(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k) {
  constexpr std::size_t T = 64;
  std::memset(c, 0, m * n * sizeof(float));
  for (std::size_t i0 = 0; i0 < m; i0 += T)
    for (std::size_t p0 = 0; p0 < k; p0 += T)
      for (std::size_t j0 = 0; j0 < n; j0 += 256) {
        const std::size_t i1 = std::min(m, i0 + T), p1 = std::min(k, p0 + T),
                          j1 = std::min(n, j0 + 256);
        for (std::size_t i = i0; i < i1; ++i)
          for (std::size_t p = p0; p < p1; ++p) {
            const float aip = a[i * k + p];
            const float* brow = b + p * n;
            float* crow = c + i * n;
            for (std::size_t j = j0; j < j1; ++j) crow[j] += aip * brow[j];
          }
      }
}

}  // namespace cpu_gemm
