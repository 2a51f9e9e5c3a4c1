// The cuBLASLt GEMM plugin's verification tolerance (kernels/cublaslt_gemm/tolerance.cpp), checked
// without a GPU: its values, that errors measured on correct split-K output on the H200 pass, and
// that an element off by 2 % of ||a.*b||_2 still fails at the deepest K the plugin is run at.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "tolerance.hpp"

using cublaslt_gemm::gemm_tolerance;

namespace {
constexpr double kUnitOut = 1.0 / 256;  // bf16's unit roundoff
}

TEST_CASE("cublaslt tolerance: values for bf16 and fp8 at K = 64, 4096, 16384") {
  // bf16: 4 u_out + 3 sqrt(K) 2^-24.
  CHECK(gemm_tolerance("bf16", 64) == doctest::Approx(4 * kUnitOut + 24.0 / (1 << 24)));
  CHECK(gemm_tolerance("bf16", 4096) == doctest::Approx(4 * kUnitOut + 192.0 / (1 << 24)));
  CHECK(gemm_tolerance("bf16", 16384) == doctest::Approx(4 * kUnitOut + 384.0 / (1 << 24)));
  // fp8 adds 3 sqrt(min(K, 128)) 2^-14 for the tensor cores' accumulation between promotions.
  const double fp8_64 = 4 * kUnitOut + 24.0 / (1 << 24) + 24.0 / (1 << 14);
  const double fp8_deep = 3 * std::sqrt(128.0) / (1 << 14);
  CHECK(gemm_tolerance("fp8", 64) == doctest::Approx(fp8_64));
  CHECK(gemm_tolerance("fp8", 4096) ==
        doctest::Approx(4 * kUnitOut + 192.0 / (1 << 24) + fp8_deep));
  CHECK(gemm_tolerance("fp8_block_128x128", 16384) ==
        doctest::Approx(4 * kUnitOut + 384.0 / (1 << 24) + fp8_deep));
  CHECK(gemm_tolerance("fp8_block_1x128", 16384) == gemm_tolerance("fp8", 16384));
}

TEST_CASE("cublaslt tolerance: grows with K and is looser for fp8") {
  double prev_bf16 = 0, prev_fp8 = 0;
  for (long long k = 1; k <= 16384; k *= 2) {
    CHECK(gemm_tolerance("bf16", k) > prev_bf16);
    CHECK(gemm_tolerance("fp8", k) >= prev_fp8);
    CHECK(gemm_tolerance("fp8", k) > gemm_tolerance("bf16", k));
    prev_bf16 = gemm_tolerance("bf16", k);
    prev_fp8 = gemm_tolerance("fp8", k);
  }
}

TEST_CASE("cublaslt tolerance: errors measured on correct split-K output pass") {
  // bf16, M = 4, N = 4096 on the H200, split-K chosen by cuBLASLt's heuristic: these failed the
  // former fixed 2^-7.
  CHECK(0.011 <= gemm_tolerance("bf16", 4096));
  CHECK(0.00782 <= gemm_tolerance("bf16", 8192));
  // Without split-K the error is the output rounding, 0.0039 at every K.
  CHECK(0.0039 <= gemm_tolerance("bf16", 64));
  // fp8 at 2048^3 on the H200: 0.0041-0.0045.
  CHECK(0.0045 <= gemm_tolerance("fp8", 2048));
}

TEST_CASE("cublaslt tolerance: a planted wrong element still fails") {
  // An element off by 2 % of ||a.*b||_2 (error metric 0.02) fails at every K up to the deepest
  // the plugin is run at, for bf16 and fp8; so do the order-1 errors of a transposed operand or a
  // scale applied to the wrong block.
  for (long long k : {64LL, 4096LL, 16384LL, 65536LL}) {
    CHECK(0.02 > gemm_tolerance("bf16", k));
    CHECK(0.02 > gemm_tolerance("fp8", k));
    CHECK(0.5 > gemm_tolerance("fp8_block_128x128", k));
  }
}

TEST_CASE("cublaslt tolerance: refuses an unknown precision and a K below 1") {
  CHECK_THROWS_AS(gemm_tolerance("fp16", 64), std::invalid_argument);
  CHECK_THROWS_AS(gemm_tolerance("", 64), std::invalid_argument);
  CHECK_THROWS_AS(gemm_tolerance("bf16", 0), std::invalid_argument);
}
