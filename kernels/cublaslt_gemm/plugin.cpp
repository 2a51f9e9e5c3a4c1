// cuBLASLt GEMM plugin. D (M x N, bf16, column-major) = A (M x K) * B (K x N), fp32 accumulation,
// each operand stored as the grid's "layout" says (gemm_data.hpp; docs/grids.md).
//
// Parameters: {"m","n","k"} (1..65536), "precision" (default "bf16"), "seed" (default 1),
// "layout" (default "TN"; "NN", "NT", "TT" for bf16 only), and for fp8 precisions
// "a_type"/"b_type" ("e4m3" default, or "e5m2" on one side for gradient GEMMs). The descriptive
// keys of model grids ("d_type", "a_scale", "b_scale", bf16's "a_type"/"b_type") must name what
// the plugin runs; any other key is refused.
//   bf16               bf16 x bf16.
//   fp8                tensor-scaled fp8 (one fp32 scale per operand, device pointers).
//   fp8_block_1x128    fp8 with one fp32 scale per 1x128 block along K on A and B (sm_90).
//   fp8_block_128x128  fp8, A 1x128 (activations) and B 128x128 (weights), DeepSeek-V3 style
//                      (sm_90).
//   mxfp8, nvfp4       Blackwell-only formats: refused on other GPUs, naming the GPU and the
//                      alternatives; not implemented by this plugin version on Blackwell either.
//
// Tactics: the heuristic's candidates, named by keys that hold for one cuBLASLt version
// (tactics.cpp). Verification: an fp64 reference over the whole output plus host spot checks
// (verification.cpp). D is poisoned with NaN at creation (inputs.cpp): an element that no
// iteration wrote fails verification. Plugin ABI 2: an iteration can be captured into a CUDA
// graph (cublasLtMatmul with the workspace allocated at creation: no allocation, no
// synchronization), and buffer sets of A, B and D cycle iterations through inputs outside the L2
// (buffer_sets.cpp). This file is the plugin table's entry points; problem.hpp lists the parts
// that build and check a problem.
#include <abharness/plugin_support.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "problem.hpp"

using namespace cublaslt_gemm;

namespace {

void say(char* err, size_t len, const std::string& msg) {
  if (err && len) std::snprintf(err, len, "cublaslt-gemm: %s", msg.c_str());
}

template <typename F>
int guarded(char* err, size_t len, F&& f) {
  try {
    f();
    return ABH_OK;
  } catch (const Failure& e) {
    say(err, len, e.what());
    return e.code;
  } catch (const std::exception& e) {
    say(err, len, e.what());
    return ABH_ERR_RUNTIME;
  }
}

void build(abh_problem& p, const abh_plugin::Params& j) {
  const bool fp8 = read_params(p, j);
  const GpuInfo gpu = current_gpu();
  if (p.precision == "mxfp8" || p.precision == "nvfp4") refuse_blackwell_formats(p, gpu);
  if (fp8) {
    check_fp8_support(p, gpu);
    p.spread = kFp8Spread;
  }
  make_inputs(p);
  describe_matmul(p, fp8);
  find_candidates(p, gpu);
}

int create(const char* params_json, abh_problem** out, char* err, size_t len) {
  auto p = std::make_unique<abh_problem>();
  int st = guarded(err, len, [&] {
    try {
      build(*p, abh_plugin::Params(params_json));
    } catch (const abh_plugin::ParamError& e) {
      throw Failure(ABH_ERR_INVALID_PARAMS, e.what());
    }
  });
  if (st == ABH_OK) *out = p.release();
  return st;
}

int enqueue(abh_problem* p, void* stream, char* err, size_t len) {
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t s =
      cublasLtMatmul(p->lt.get(), p->desc.get(), &alpha, p->a.get(), p->la.get(), p->b.get(),
                     p->lb.get(), &beta, p->d.get(), p->ld.get(), p->d.get(), p->ld.get(), &p->algo,
                     p->workspace.get(), kWorkspaceBytes, static_cast<cudaStream_t>(stream));
  if (s != CUBLAS_STATUS_SUCCESS) {
    say(err, len, std::string("cublasLtMatmul: ") + cublasLtGetStatusString(s));
    return ABH_ERR_RUNTIME;
  }
  return ABH_OK;
}

int verify(abh_problem* p, abh_verify_result* r, char* err, size_t len) {
  return guarded(err, len, [&] { verify_output(*p, r); });
}

double flops(const abh_problem* p) {
  return 2.0 * double(p->m) * double(p->n) * double(p->k);
}
double min_bytes(const abh_problem* p) {
  return double(p->m * p->k) * elem_bytes(p->ea) + double(p->n * p->k) * elem_bytes(p->eb) +
         2.0 * double(p->m * p->n);
}

int tactic_count(abh_problem* p) {
  return static_cast<int>(p->candidates.size());
}

int tactic_key(abh_problem* p, int index, char* buf, size_t len) {
  if (index < 0 || index >= static_cast<int>(p->candidates.size())) return ABH_ERR_INVALID_PARAMS;
  std::string key = tactic_key_of(p->candidates[static_cast<size_t>(index)]);
  if (key.size() + 1 > len) return ABH_ERR_INVALID_PARAMS;
  std::snprintf(buf, len, "%s", key.c_str());
  return ABH_OK;
}

int select_tactic(abh_problem* p, const char* key, char* err, size_t len) {
  return guarded(err, len, [&] { p->algo = algo_of_key(*p, key ? key : ""); });
}

int library_versions(char* buf, size_t len) {
  int rt = 0;
  if (cudaRuntimeGetVersion(&rt) != cudaSuccess) return ABH_ERR_RUNTIME;
  std::snprintf(buf, len, "{\"cublasLt\":\"%zu\",\"cudart\":\"%d\"}", cublasLtGetVersion(), rt);
  return ABH_OK;
}

uint32_t capabilities(const abh_problem*) {
  return ABH_CAP_CAPTURABLE | ABH_CAP_BUFFER_SETS;
}

double buffer_set_bytes(const abh_problem* p) {
  return set_bytes(*p);
}

int make_buffer_sets(abh_problem* p, int count, char* err, size_t len) {
  return guarded(err, len, [&] { make_sets(*p, count); });
}

int use_buffer_set(abh_problem* p, int index, char* err, size_t len) {
  return guarded(err, len, [&] { use_set(*p, index); });
}

}  // namespace

ABH_PLUGIN_DEFINE_V2("cublaslt-gemm", ABH_DEVICE_CUDA)
