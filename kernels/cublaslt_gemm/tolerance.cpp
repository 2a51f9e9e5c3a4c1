// The tolerance of verification.cpp's error e = |D - ref| / max(|ref|, L), L = ||a_i .* b_j||_2.
// Every term is relative to L (an upper bound for terms relative to max(|ref|, L)); the inputs are
// independent, zero-mean random values (gemm_data.hpp), so rounding errors are modelled as
// independent and zero-mean, and a sum of them is bounded by 5.2 standard deviations. A
// rounding to unit roundoff u is uniform within +-u|x|, so its standard deviation is at most
// u|x|/sqrt(3); 5.2 is a union bound over 2^18 elements (M = 64, N = 4096):
// 2^18 * P(|Z| > 5.2) = 0.05. Hence each random-walk term below carries 5.2/sqrt(3) = 3.
//
//  1. Output rounding (D is bf16): at most u_out = 2^-8 of |D|, once.
//  2. Split-K partial sums rounded to the output type: cuBLASLt may cut K into S slices whose fp32
//     partials p_s are stored as bf16 and then added (measured on the H200 at M = 4: 0.011 at
//     K = 4096, 0.0078 at K = 8192, against 0.0039 without split-K). Each rounding errs by at most
//     u_out |p_s|; the sum of S such errors has a standard deviation of at most
//     u_out sqrt(sum p_s^2)/sqrt(3), and sum p_s^2 = L^2 in expectation for independent zero-mean
//     products, whatever S is: 3 u_out. (A worst-case bound, u_out sum |p_s| <= u_out sqrt(S) L,
//     grows with S; the random walk does not.) Summing the S partials in bf16 in place adds a term
//     growing like sqrt(S) u_out: a host simulation of 2^16 elements at K = 4096 gave 3.2 u_out at
//     S = 4 and 4.2 u_out at S = 8, so an in-place reduction of 8 or more slices can exceed the
//     bound (verification.cpp names the selected algorithm's split-K count and reduction scheme).
//  3. fp32 accumulation (u_acc = 2^-24): K roundings, each at most u_acc |s_t| of the running sum;
//     sum_t s_t^2 = K L^2 / 2 in expectation, so sigma <= u_acc L sqrt(K/6), below
//     3 sqrt(K) u_acc. (The worst case, K u_acc sum|a.*b| <= K^1.5 u_acc L, is 0.125 at K = 16384
//     and is not reached by random data.)
//  4. fp8 only: Hopper's fp8 tensor cores are reported (DeepSeek-V3 technical report) to
//     accumulate with about 14 significand bits (u_tc = 2^-14); cuBLASLt promotes the partials to
//     fp32 (its interval is not documented; kPromote = 128 products is assumed); within one
//     interval the same random walk gives 3 sqrt(min(K, 128)) u_tc, and the intervals' errors add
//     as a random walk whose total stays at that size relative to L.
#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace cublaslt_gemm {
namespace {

constexpr double kUnitOut = 1.0 / 256;           // bf16 output: 8 significand bits
constexpr double kUnitAcc = 1.0 / (1 << 24);     // fp32 accumulator
constexpr double kUnitFp8Acc = 1.0 / (1 << 14);  // fp8 tensor-core accumulation before promotion
constexpr long long kPromote = 128;              // products per fp8 promotion interval
constexpr double kWalk = 3;                      // 5.2 standard deviations of a uniform rounding

}  // namespace

double gemm_tolerance(std::string_view precision, long long k) {
  if (k < 1)
    throw std::invalid_argument("gemm_tolerance: k must be >= 1, got " + std::to_string(k));
  const bool fp8 = precision.substr(0, 3) == "fp8";
  if (!fp8 && precision != "bf16")
    throw std::invalid_argument("gemm_tolerance: unknown precision \"" + std::string(precision) +
                                "\" (bf16 or fp8...)");
  const double kd = static_cast<double>(k);
  double tol = kUnitOut                             // 1. output rounding
               + kWalk * kUnitOut                   // 2. split-K partials in the output type
               + kWalk * std::sqrt(kd) * kUnitAcc;  // 3. fp32 accumulation
  if (fp8)
    tol += kWalk * std::sqrt(static_cast<double>(std::min(k, kPromote))) * kUnitFp8Acc;  // 4.
  return tol;
}

}  // namespace cublaslt_gemm
