// The cuBLASLt GEMM plugin's problem and the parts that build and check it, one file each:
// the parameters and whether this GPU can run them (params.cpp), the inputs (inputs.cpp), the
// matmul's layouts and descriptor (matmul_desc.cpp), the tactics (tactics.cpp), the verification
// (verification.cpp), and the plugin table's entry points (plugin.cpp, which says what the plugin
// runs). Every part reports a failure by throwing Failure with the plugin status it stands for;
// the entry points turn it into that status and its message.
#pragma once

#include <abharness/plugin.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <abharness/plugin_cuda.hpp>
#include <abharness/plugin_support.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_data.hpp"

namespace cublaslt_gemm {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

struct Failure : std::runtime_error {
  Failure(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;  // an abh_status
};

// A runtime Failure naming `what` when a CUDA or cuBLASLt call failed.
inline void cuda_ok(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess)
    throw Failure(ABH_ERR_RUNTIME, what + ": " + abh_plugin::cuda::error_text(e));
}

inline void lt_ok(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Failure(ABH_ERR_RUNTIME, what + ": " + cublasLtGetStatusString(s));
}

using DevBuf = abh_plugin::cuda::DeviceBuffer<>;

inline DevBuf dev_alloc(std::size_t bytes, const char* what) {
  DevBuf b;
  cuda_ok(abh_plugin::cuda::device_alloc(b, std::max<std::size_t>(bytes, 16)),
          std::string("cudaMalloc(") + what + ", " + std::to_string(bytes) + " bytes)");
  return b;
}

// Owners of cuBLASLt's objects, each destroyed with its owner.
struct HandleFree {
  void operator()(cublasLtContext* h) const { cublasLtDestroy(h); }
};
struct DescFree {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
};
struct LayoutFree {
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublasLtMatrixLayoutDestroy(l); }
};
struct PrefFree {
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublasLtMatmulPreferenceDestroy(p); }
};
using LtHandle = std::unique_ptr<cublasLtContext, HandleFree>;
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescFree>;
using LayoutPtr = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutFree>;
using MatmulPref = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PrefFree>;

inline std::size_t elem_bytes(Elem e) {
  return e == Elem::bf16 ? 2 : 1;
}

// Host copy of one operand's scales plus the device buffer cuBLASLt reads.
struct Scales {
  ScaleMode mode = ScaleMode::none;
  float scalar = 1.f;
  long long ld = 0;
  std::vector<float> host;
  DevBuf dev;

  ScaleView view(bool device) const {
    ScaleView v;
    v.mode = mode;
    v.scalar = scalar;
    v.ld = ld;
    v.p = device ? static_cast<const float*>(dev.get()) : host.data();
    return v;
  }
};

// One buffer set's operands (buffer_sets.cpp).
struct BufferSet {
  DevBuf a, b, d;
};

struct GpuInfo {
  std::string name;  // "NVIDIA H200 (sm_90)"
  int major = 0, cc = 0;
};

}  // namespace cublaslt_gemm

struct abh_problem {
  long long m = 0, n = 0, k = 0;
  std::string precision;
  std::string layout;  // as the grid names it: "TN", "NN", "NT" or "TT"
  bool a_k_major = true, b_k_major = true;
  cublaslt_gemm::OperandStride sta, stb;  // where each operand's elements live (gemm_data.hpp)
  cublaslt_gemm::Elem ea = cublaslt_gemm::Elem::bf16, eb = cublaslt_gemm::Elem::bf16;
  std::uint64_t seed = 1;
  float spread = 1.f;
  cublaslt_gemm::Scales sa, sb;
  cublaslt_gemm::DevBuf a, b, d, workspace;
  cublaslt_gemm::LtHandle lt;
  cublaslt_gemm::MatmulDesc desc;
  cublaslt_gemm::LayoutPtr la, lb, ld;
  cublaslt_gemm::MatmulPref pref;
  std::vector<cublasLtMatmulAlgo_t> candidates;
  cublasLtMatmulAlgo_t algo{};
  // Buffer sets (buffer_sets.cpp): the current one is in a, b and d; the others wait here.
  std::vector<cublaslt_gemm::BufferSet> sets;
  int set = 0;
};

namespace cublaslt_gemm {

// Phase 1 (params.cpp): reads the parameters into `p`; returns whether the precision is fp8.
bool read_params(abh_problem& p, const abh_plugin::Params& j);
// Phase 2 (params.cpp): the current GPU, and whether it and cuBLASLt can run the problem.
GpuInfo current_gpu();
void refuse_blackwell_formats(const abh_problem& p, const GpuInfo& gpu);
void check_fp8_support(const abh_problem& p, const GpuInfo& gpu);
// Phase 3 (inputs.cpp): the operands and scales on the GPU, D poisoned with NaN.
void make_inputs(abh_problem& p);
// Phase 4 (matmul_desc.cpp): the handle, the matmul descriptor and the operands' layouts.
void describe_matmul(abh_problem& p, bool fp8);
// Phase 5 (tactics.cpp): the heuristic's candidates; the first is selected.
void find_candidates(abh_problem& p, const GpuInfo& gpu);
// The key of a candidate, and the algorithm a key names, re-validated for `p`.
std::string tactic_key_of(const cublasLtMatmulAlgo_t& algo);
cublasLtMatmulAlgo_t algo_of_key(const abh_problem& p, const std::string& key);
// verification.cpp: checks the last output and fills `r`; throws a WRONG_RESULT Failure after
// filling it when the error is outside the tolerance.
void verify_output(const abh_problem& p, abh_verify_result* r);
// buffer_sets.cpp: the bytes of one set, making `count` sets (once), and making set `index`
// the current one.
double set_bytes(const abh_problem& p);
void make_sets(abh_problem& p, int count);
void use_set(abh_problem& p, int index);

}  // namespace cublaslt_gemm
