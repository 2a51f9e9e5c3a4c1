// CPU GEMM plugin: the embedded default, so the whole A/B/A pipeline runs on a machine without a
// GPU. Parameters: {"m","n","k"} (positive integers), optional "seed" (default 1) and "dtype"
// (only "fp32"). It computes one GEMM: fp32, A [M, K] and B [K, N] row-major, which is layout
// "NN" in docs/grids.md; a grid key asking for anything else ("precision", "layout", operand types
// or scales) or a key it does not know is refused, never ignored. Verification compares against an
// fp64 host reference on up to 64 rows spread over the output; the error of each element is
// normalised by sum_p |a_ip * b_pj|, the natural bound of fp32 accumulation error, and the
// tolerance is 1e-4 (fp32: k * 2^-24 stays below it up to k = 1677; random-sign inputs stay orders
// of magnitude below in practice).
#include <abharness/plugin_support.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gemm_kernel.hpp"

struct abh_problem {
  std::size_t m = 0, n = 0, k = 0;
  std::vector<float> a, b, c;
};

namespace {

constexpr double kTolerance = 1e-4;
constexpr std::size_t kMaxDim = 1u << 16;

using abh_plugin::say;

// The grid vocabulary's descriptive keys (docs/grids.md) and the one value of each this plugin
// runs; "" marks keys read below.
const std::pair<const char*, const char*> kKeys[] = {
    {"m", ""},          {"n", ""},           {"k", ""},
    {"seed", ""},       {"dtype", ""},       {"precision", "fp32"},
    {"layout", "NN"},   {"a_type", "fp32"},  {"b_type", "fp32"},
    {"d_type", "fp32"}, {"a_scale", "none"}, {"b_scale", "none"}};

// Empty when every key is known and every descriptive key names what this plugin runs.
std::string refusal(const abh_plugin::Params& j) {
  for (const std::string& key : j.keys()) {
    const auto* it = std::find_if(std::begin(kKeys), std::end(kKeys),
                                  [&](const auto& kv) { return key == kv.first; });
    if (it == std::end(kKeys))
      return "cpu-gemm: shape " + j.shape() + ": unknown param '" + key +
             "' (it reads m, n, k, seed, dtype and checks precision, layout, a_type, b_type, "
             "d_type, a_scale, b_scale): remove it from the grid";
    if (*it->second && j.raw(key) != std::string("\"") + it->second + "\"")
      return "cpu-gemm: shape " + j.shape() + ": param '" + key + "' is " + j.raw(key) +
             ", but this plugin runs " + key + " \"" + it->second +
             "\" only: use the cublaslt plugin for bf16/fp8 and the TN/NT layouts";
  }
  return "";
}

int create(const char* params_json, abh_problem** out, char* err, size_t err_len) {
  try {
    const abh_plugin::Params j(params_json);
    if (std::string why = refusal(j); !why.empty()) {
      say(err, err_len, why);
      return ABH_ERR_UNSUPPORTED;
    }
    auto dim = [&](const char* key) {
      return static_cast<std::size_t>(j.required_int(key, 1, static_cast<long long>(kMaxDim)));
    };
    auto p = std::make_unique<abh_problem>();
    p->m = dim("m"), p->n = dim("n"), p->k = dim("k");
    std::string dtype = j.optional_string("dtype", "fp32");
    if (dtype != "fp32") {
      say(err, err_len,
          "cpu-gemm supports dtype fp32 only (got '" + dtype +
              "'): use the cublaslt plugin for bf16/fp8");
      return ABH_ERR_UNSUPPORTED;
    }
    std::mt19937 rng(static_cast<std::uint32_t>(j.optional_int("seed", 1, 0, UINT32_MAX)));
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    p->a.resize(p->m * p->k);
    p->b.resize(p->k * p->n);
    p->c.assign(p->m * p->n, 0.f);
    for (auto& x : p->a) x = dist(rng);
    for (auto& x : p->b) x = dist(rng);
    *out = p.release();
    return ABH_OK;
  } catch (const std::exception& e) {
    say(err, err_len, std::string("cpu-gemm: ") + e.what());
    return ABH_ERR_INVALID_PARAMS;
  }
}

int enqueue(abh_problem* p, void*, char*, size_t) {
  cpu_gemm::gemm(p->a.data(), p->b.data(), p->c.data(), p->m, p->n, p->k);
  return ABH_OK;
}

int verify(abh_problem* p, abh_verify_result* out, char*, size_t) {
  const std::size_t rows = std::min<std::size_t>(p->m, 64);
  double worst = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t i = rows == p->m ? r : r * (p->m - 1) / (rows - 1 ? rows - 1 : 1);
    for (std::size_t j = 0; j < p->n; ++j) {
      double ref = 0, scale = 0;
      for (std::size_t q = 0; q < p->k; ++q) {
        double t = double(p->a[i * p->k + q]) * double(p->b[q * p->n + j]);
        ref += t;
        scale += std::fabs(t);
      }
      double e = std::fabs(double(p->c[i * p->n + j]) - ref) / std::max(scale, 1e-30);
      if (!(e <= worst)) worst = e;  // NaN propagates as a failure
    }
  }
  out->max_rel_error = worst;
  out->tolerance = kTolerance;
  out->checked = rows * p->n;
  std::snprintf(out->method, sizeof out->method,
                "fp64 host reference on %zu of %zu rows, error / sum|a*b|", rows, p->m);
  return worst <= kTolerance ? ABH_OK : ABH_ERR_WRONG_RESULT;
}

double flops(const abh_problem* p) {
  return 2.0 * double(p->m) * double(p->n) * double(p->k);
}
double min_bytes(const abh_problem* p) {
  return 4.0 * (double(p->m) * p->k + double(p->k) * p->n + double(p->m) * p->n);
}
const char* tactic_of(const abh_problem*) {
  return cpu_gemm::kernel_name();
}
int library_versions(char* buf, size_t len) {
  std::snprintf(buf, len, "{\"cpu-gemm-kernel\":\"%s\"}", cpu_gemm::kernel_name());
  return ABH_OK;
}

}  // namespace

ABH_PLUGIN_DEFINE_ONE_TACTIC("cpu-gemm", ABH_DEVICE_CPU, tactic_of)
