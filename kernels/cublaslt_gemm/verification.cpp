// The verification of a cuBLASLt GEMM problem's last output (problem.hpp): an fp64 reference over
// the whole output on the GPU (reference.cu, from the same quantized inputs and scales), plus 16
// elements recomputed on the host from the input generator alone, so that a bug in input upload
// or layout is caught too. Error per element: |D - ref| / max(|ref|, ||a.*b||_2). Tolerance:
// gemm_tolerance(precision, K) (tolerance.cpp derives it: output rounding, split-K partial sums
// rounded to the output type, fp32 and fp8 tensor-core accumulation).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "problem.hpp"
#include "tolerance.hpp"

namespace cublaslt_gemm {
namespace {

constexpr int kSpotChecks = 16;

double host_element(const abh_problem& p, long long i, long long j, double* l2) {
  const ScaleView sa = p.sa.view(false), sb = p.sb.view(false);
  double acc = 0, acc2 = 0;
  for (long long q = 0; q < p.k; ++q) {
    const auto ia = std::uint64_t(offset_of(p.sta, i, q)),
               ib = std::uint64_t(offset_of(p.stb, j, q));
    double a = quantized(p.ea, unit_value(p.seed, 1, ia) * p.spread);
    double b = quantized(p.eb, unit_value(p.seed, 2, ib) * p.spread);
    if (sa.mode != ScaleMode::none) a *= scale_at(sa, i, q);
    if (sb.mode != ScaleMode::none) b *= scale_at(sb, j, q);
    acc += a * b;
    acc2 += (a * b) * (a * b);
  }
  *l2 = std::sqrt(acc2);
  return acc;
}

// The worst error of the host spot checks: corners, centre and seeded random elements.
double worst_spot_error(const abh_problem& p) {
  double worst = 0;
  std::mt19937_64 rng(p.seed ^ 0x5eedull);
  for (int t = 0; t < kSpotChecks; ++t) {
    long long i, j;
    if (t < 4) {
      i = (t & 1) ? p.m - 1 : 0;
      j = (t & 2) ? p.n - 1 : 0;
    } else if (t == 4) {
      i = p.m / 2, j = p.n / 2;
    } else {
      i = static_cast<long long>(rng() % std::uint64_t(p.m));
      j = static_cast<long long>(rng() % std::uint64_t(p.n));
    }
    __nv_bfloat16 got_bf{};
    cuda_ok(cudaMemcpy(&got_bf, static_cast<const __nv_bfloat16*>(p.d.get()) + (i + j * p.m),
                       sizeof got_bf, cudaMemcpyDeviceToHost),
            "read back D element");
    double l2 = 0;
    const double want = host_element(p, i, j, &l2);
    const double got = __bfloat162float(got_bf);
    double e = std::fabs(got - want) / std::max(std::fabs(want), l2 > 0 ? l2 : 1e-300);
    if (!std::isfinite(got)) e = INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

// How the selected algorithm splits K and where it adds the partial sums, for the method string:
// tolerance.cpp's split-K term assumes partials rounded to bf16 once (out of place) or few in
// place, so a failure names the reduction it came from.
std::string split_k_of(const cublasLtMatmulAlgo_t& algo) {
  std::int32_t splits = 1;
  std::uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
  std::size_t written = 0;
  lt_ok(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splits,
                                             sizeof splits, &written),
        "cublasLtMatmulAlgoConfigGetAttribute(SPLITK_NUM)");
  lt_ok(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
                                             sizeof scheme, &written),
        "cublasLtMatmulAlgoConfigGetAttribute(REDUCTION_SCHEME)");
  const char* how = scheme == CUBLASLT_REDUCTION_SCHEME_INPLACE        ? "in place"
                    : scheme == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE ? "fp32 workspace"
                    : scheme == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE  ? "bf16 workspace"
                    : scheme == CUBLASLT_REDUCTION_SCHEME_NONE         ? "none"
                                                                       : "other";
  return "split-K " + std::to_string(splits) + " (" + how + ")";
}

}  // namespace

void verify_output(const abh_problem& p, abh_verify_result* r) {
  RefResult ref;
  const OperandView a{p.a.get(), p.ea, p.sa.view(true), p.sta};
  const OperandView b{p.b.get(), p.eb, p.sb.view(true), p.stb};
  cuda_ok(reference_check(a, b, static_cast<const __nv_bfloat16*>(p.d.get()), p.m, p.n, p.k, &ref,
                          nullptr),
          "fp64 reference kernel");
  const double worst = std::max(ref.max_err, worst_spot_error(p));
  r->max_rel_error = worst;
  r->tolerance = gemm_tolerance(p.precision, p.k);
  r->checked = static_cast<uint64_t>(p.m * p.n);
  std::snprintf(r->method, sizeof r->method,
                "fp64 GPU ref on all %lld + %d host elements; |d-ref|/max(|ref|,||a.*b||2); %s",
                p.m * p.n, kSpotChecks, split_k_of(p.algo).c_str());
  if (!(worst <= r->tolerance)) throw Failure(ABH_ERR_WRONG_RESULT, "output outside tolerance");
}

}  // namespace cublaslt_gemm
