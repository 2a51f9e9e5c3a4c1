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
// Tactics: the heuristic's candidates (up to 16, 32 MiB workspace). A tactic key is
// "cublasLt<version>:<hex of the 64-byte cublasLtMatmulAlgo_t>"; select_tactic refuses a key made
// for another cuBLASLt version and re-validates the algorithm with cublasLtMatmulAlgoCheck.
//
// Verification: an fp64 reference over the whole output on the GPU (from the same quantized inputs
// and scales), plus 16 elements recomputed on the host from the input generator alone, so a bug in
// input upload or layout is caught too. Error per element: |D - ref| / max(|ref|, ||a.*b||_2).
// Tolerance: 2^-7 for bf16 (the bf16 output rounding is <= 2^-8 of |ref|, doubled for fp32
// accumulation), 2^-6 for fp8 precisions (fp8 tensor-core accumulation is promoted to fp32 in
// chunks, so it adds more rounding steps). D is poisoned with NaN at creation: an element that no
// iteration wrote fails verification.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <abharness/plugin_support.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_data.hpp"

using namespace cublaslt_gemm;

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;
constexpr int kMaxCandidates = 16;
constexpr long long kMaxDim = 1 << 16;
constexpr int kSpotChecks = 16;

struct Failure : std::runtime_error {
  Failure(int code, const std::string& what) : std::runtime_error(what), code(code) {}
  int code;
};

void cuda_ok(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess)
    throw Failure(ABH_ERR_RUNTIME,
                  what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

void lt_ok(cublasStatus_t s, const std::string& what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Failure(ABH_ERR_RUNTIME, what + ": " + cublasLtGetStatusString(s));
}

struct DevFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DevBuf = std::unique_ptr<void, DevFree>;

DevBuf dev_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  cuda_ok(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)),
          std::string("cudaMalloc(") + what + ", " + std::to_string(bytes) + " bytes)");
  return DevBuf(p);
}

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

std::string lt_version_tag() {
  return "cublasLt" + std::to_string(cublasLtGetVersion());
}

cudaDataType_t cuda_type(Elem e) {
  switch (e) {
    case Elem::bf16:
      return CUDA_R_16BF;
    case Elem::e4m3:
      return CUDA_R_8F_E4M3;
    default:
      return CUDA_R_8F_E5M2;
  }
}

std::size_t elem_bytes(Elem e) {
  return e == Elem::bf16 ? 2 : 1;
}

Elem parse_fp8(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && !j[key].is_string())
    throw Failure(ABH_ERR_INVALID_PARAMS, std::string("param '") + key + "' must be a string");
  std::string t = j.value(key, std::string("e4m3"));
  if (t == "e4m3") return Elem::e4m3;
  if (t == "e5m2") return Elem::e5m2;
  throw Failure(ABH_ERR_INVALID_PARAMS,
                std::string("param '") + key + "' must be \"e4m3\" or \"e5m2\", got \"" + t + "\"");
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

// Random powers of two in [2^-3, 2^3]: exact in fp32 and varied enough that a scale applied to
// the wrong block changes the result.
void make_block_scales(Scales& s, ScaleMode mode, long long outer, long long k, std::uint64_t seed,
                       int matrix) {
  s.mode = mode;
  const long long kb = (k + 127) / 128;
  long long count = 0;
  if (mode == ScaleMode::vec128) {
    s.ld = (outer + 3) / 4 * 4;  // 16-byte aligned columns
    count = kb * s.ld;
  } else {
    s.ld = (kb + 3) / 4 * 4;
    count = (outer + 127) / 128 * s.ld;
  }
  s.host.resize(static_cast<std::size_t>(count));
  for (long long i = 0; i < count; ++i) {
    std::uint64_t h = mix64(seed ^ (std::uint64_t(matrix) << 56) ^ std::uint64_t(i));
    s.host[static_cast<std::size_t>(i)] = std::ldexp(1.0f, static_cast<int>(h % 7) - 3);
  }
  s.dev = dev_alloc(s.host.size() * sizeof(float), "block scales");
  cuda_ok(
      cudaMemcpy(s.dev.get(), s.host.data(), s.host.size() * sizeof(float), cudaMemcpyHostToDevice),
      "upload block scales");
}

void make_tensor_scale(Scales& s, float value) {
  s.mode = ScaleMode::tensor;
  s.scalar = value;
  s.host = {value};
  s.dev = dev_alloc(sizeof(float), "tensor scale");
  cuda_ok(cudaMemcpy(s.dev.get(), &value, sizeof value, cudaMemcpyHostToDevice),
          "upload tensor scale");
}

}  // namespace

struct abh_problem {
  long long m = 0, n = 0, k = 0;
  std::string precision;
  std::string layout;  // as the grid names it: "TN", "NN", "NT" or "TT"
  bool a_k_major = true, b_k_major = true;
  OperandStride sta, stb;  // where each operand's elements live (gemm_data.hpp)
  Elem ea = Elem::bf16, eb = Elem::bf16;
  std::uint64_t seed = 1;
  float spread = 1.f;
  Scales sa, sb;
  DevBuf a, b, d, workspace;
  std::unique_ptr<cublasLtContext, HandleFree> lt;
  std::unique_ptr<cublasLtMatmulDescOpaque_t, DescFree> desc;
  std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutFree> la, lb, ld;
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PrefFree> pref;
  std::vector<cublasLtMatmulAlgo_t> candidates;
  cublasLtMatmulAlgo_t algo{};
};

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

void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void* v,
              std::size_t size, const char* what) {
  lt_ok(cublasLtMatmulDescSetAttribute(d, a, v, size),
        std::string("cublasLtMatmulDescSetAttribute(") + what + ")");
}

// ---- Phase 1: read the parameters. Every key of the grid vocabulary (docs/grids.md) is checked
// against what this plugin runs; an unknown key or a value it would not honour is refused, never
// ignored (a layout or scale silently substituted would label one GEMM's time with another's name).

const char* const kKnownKeys[] = {"m",      "n",      "k",      "precision", "seed",   "layout",
                                  "a_type", "b_type", "d_type", "a_scale",   "b_scale"};

void check_keys(const nlohmann::json& j) {
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (std::find(std::begin(kKnownKeys), std::end(kKnownKeys), key) == std::end(kKnownKeys))
      throw Failure(ABH_ERR_INVALID_PARAMS,
                    "unknown param '" + key +
                        "': this plugin reads m, n, k, precision, seed, layout, a_type, b_type, "
                        "d_type, a_scale, b_scale (docs/grids.md); remove it from the grid");
  }
}

long long read_dim(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<long long>() < 1 ||
      j[key].get<long long>() > kMaxDim)
    throw Failure(ABH_ERR_INVALID_PARAMS, std::string("param '") + key +
                                              "' must be an integer in [1, " +
                                              std::to_string(kMaxDim) + "]");
  return j[key].get<long long>();
}

// A key that only describes the GEMM (written by `abharness grid --model`) must describe the one
// this plugin runs.
void expect_value(const nlohmann::json& j, const char* key, const std::string& runs,
                  const std::string& precision) {
  if (!j.contains(key)) return;
  if (!j[key].is_string() || j[key].get<std::string>() != runs)
    throw Failure(ABH_ERR_UNSUPPORTED, std::string("param '") + key + "' is " + j[key].dump() +
                                           ", but precision \"" + precision + "\" runs " + key +
                                           " \"" + runs + "\" in this plugin");
}

// "layout" (docs/grids.md): letter 0 is operand B's storage ('T' = [N, K], 'N' = [K, N]),
// letter 1 operand A's ('N' = [M, K], 'T' = [K, M]).
void read_layout(abh_problem& p, const nlohmann::json& j, bool fp8) {
  p.layout = "TN";
  if (j.contains("layout")) {
    const nlohmann::json& v = j["layout"];
    if (!v.is_string() || v.get<std::string>().size() != 2 ||
        std::string("TN").find(v.get<std::string>()[0]) == std::string::npos ||
        std::string("NT").find(v.get<std::string>()[1]) == std::string::npos)
      throw Failure(ABH_ERR_INVALID_PARAMS,
                    "param 'layout' must be \"TN\", \"NN\", \"NT\" or \"TT\", got " + v.dump());
    p.layout = v.get<std::string>();
  }
  if (fp8 && p.layout != "TN")
    throw Failure(ABH_ERR_UNSUPPORTED,
                  "layout \"" + p.layout + "\" with precision \"" + p.precision +
                      "\": fp8 tensor cores on sm_90 read both operands K-major, so fp8 runs "
                      "only \"TN\" (quantize the operands K-major, as docs/grids.md explains)");
  p.a_k_major = p.layout[1] == 'N';
  p.b_k_major = p.layout[0] == 'T';
}

// The scale modes each precision runs, as grid params name them.
std::pair<std::string, std::string> scale_names(const std::string& precision) {
  if (precision == "bf16") return {"none", "none"};
  if (precision == "fp8") return {"scalar_32f", "scalar_32f"};
  if (precision == "fp8_block_1x128") return {"vec128_32f", "vec128_32f"};
  return {"vec128_32f", "blk128x128_32f"};
}

// Returns whether the precision is an fp8 one.
bool read_params(abh_problem& p, const nlohmann::json& j) {
  check_keys(j);
  p.m = read_dim(j, "m"), p.n = read_dim(j, "n"), p.k = read_dim(j, "k");
  if (j.contains("seed") && !j["seed"].is_number_unsigned())
    throw Failure(ABH_ERR_INVALID_PARAMS, "param 'seed' must be a non-negative integer");
  p.seed = j.value("seed", std::uint64_t(1));
  if (j.contains("precision") && !j["precision"].is_string())
    throw Failure(ABH_ERR_INVALID_PARAMS, "param 'precision' must be a string");
  p.precision = j.value("precision", std::string("bf16"));
  const bool fp8 = p.precision != "bf16";
  if (fp8 && p.precision != "fp8" && p.precision != "fp8_block_1x128" &&
      p.precision != "fp8_block_128x128" && p.precision != "mxfp8" && p.precision != "nvfp4")
    throw Failure(ABH_ERR_INVALID_PARAMS,
                  "param 'precision' must be one of bf16, fp8, fp8_block_1x128, "
                  "fp8_block_128x128, mxfp8, nvfp4; got \"" +
                      p.precision + "\"");
  if (p.precision == "mxfp8" || p.precision == "nvfp4") return true;  // refused by the GPU check
  read_layout(p, j, fp8);
  if (fp8) {
    p.ea = parse_fp8(j, "a_type");
    p.eb = parse_fp8(j, "b_type");
  } else {
    expect_value(j, "a_type", "bf16", p.precision);
    expect_value(j, "b_type", "bf16", p.precision);
  }
  expect_value(j, "d_type", "bf16", p.precision);
  const auto [a_scale, b_scale] = scale_names(p.precision);
  expect_value(j, "a_scale", a_scale, p.precision);
  expect_value(j, "b_scale", b_scale, p.precision);
  return fp8;
}

// ---- Phase 2: can this GPU and cuBLASLt run it?

struct GpuInfo {
  std::string name;  // "NVIDIA H200 (sm_90)"
  int major = 0, cc = 0;
};

GpuInfo current_gpu() {
  int dev = 0;
  cuda_ok(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  return {std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
              std::to_string(prop.minor) + ")",
          prop.major, prop.major * 10 + prop.minor};
}

void refuse_blackwell_formats(const abh_problem& p, const GpuInfo& gpu) {
  const char* what = p.precision == "mxfp8" ? "MXFP8 (E4M3 with a UE8M0 scale per 32 elements)"
                                            : "NVFP4 (E2M1 with a UE4M3 scale per 16 elements)";
  if (gpu.major < 10)
    throw Failure(ABH_ERR_UNSUPPORTED,
                  std::string("precision \"") + p.precision + "\": " + what +
                      " runs only on Blackwell GPUs (compute capability 10.0 or newer); this "
                      "GPU is " +
                      gpu.name +
                      ". On this GPU use precision \"fp8\" (tensor-scaled E4M3), "
                      "\"fp8_block_1x128\" or \"fp8_block_128x128\", or \"bf16\"");
  throw Failure(ABH_ERR_UNSUPPORTED,
                std::string("precision \"") + p.precision + "\" on " + gpu.name +
                    ": not implemented by this plugin version (its block-scale layout has not "
                    "been validated on a Blackwell GPU); use \"fp8\" or \"bf16\"");
}

void check_fp8_support(const abh_problem& p, const GpuInfo& gpu) {
  if (p.ea == Elem::e5m2 && p.eb == Elem::e5m2)
    throw Failure(ABH_ERR_UNSUPPORTED,
                  "fp8 E5M2 x E5M2 is not supported by cuBLASLt: use E4M3 x E4M3, or E4M3 x "
                  "E5M2 for gradient GEMMs");
  if (gpu.cc < 89)
    throw Failure(ABH_ERR_UNSUPPORTED,
                  "fp8 GEMMs need compute capability 8.9 or newer; this GPU is " + gpu.name +
                      ": use precision \"bf16\"");
  if (p.precision != "fp8" && gpu.major != 9)
    throw Failure(ABH_ERR_UNSUPPORTED, "precision \"" + p.precision +
                                           "\" (fp32 block scales) is a Hopper (sm_90) mode; this "
                                           "GPU is " +
                                           gpu.name + ": use \"fp8\"" +
                                           (gpu.major >= 10 ? " or \"mxfp8\"" : ""));
  if (p.precision != "fp8" && p.k % 128 != 0)
    throw Failure(ABH_ERR_INVALID_PARAMS, "precision \"" + p.precision +
                                              "\" needs k to be a multiple of 128, got " +
                                              std::to_string(p.k));
  if (p.k % 16 != 0)
    throw Failure(
        ABH_ERR_INVALID_PARAMS,
        "fp8 needs k to be a multiple of 16 (16-byte aligned rows), got " + std::to_string(p.k));
}

// ---- Phase 3: inputs, generated on the GPU from the seed (by storage offset, so the host can
// recompute any element); D poisoned with NaN.

void make_inputs(abh_problem& p) {
  p.sta = p.a_k_major ? OperandStride{p.k, 1} : OperandStride{1, p.m};
  p.stb = p.b_k_major ? OperandStride{p.k, 1} : OperandStride{1, p.n};
  p.a = dev_alloc(std::size_t(p.m * p.k) * elem_bytes(p.ea), "A");
  p.b = dev_alloc(std::size_t(p.n * p.k) * elem_bytes(p.eb), "B");
  p.d = dev_alloc(std::size_t(p.m * p.n) * 2, "D");
  p.workspace = dev_alloc(kWorkspaceBytes, "workspace");
  cuda_ok(fill(p.a.get(), p.ea, p.m * p.k, p.seed, 1, p.spread, nullptr), "fill A");
  cuda_ok(fill(p.b.get(), p.eb, p.n * p.k, p.seed, 2, p.spread, nullptr), "fill B");
  cuda_ok(fill_nan(static_cast<__nv_bfloat16*>(p.d.get()), p.m * p.n, nullptr), "poison D");
  if (p.precision == "fp8") {
    make_tensor_scale(p.sa, 0.5f);
    make_tensor_scale(p.sb, 0.25f);
  } else if (p.precision == "fp8_block_1x128") {
    make_block_scales(p.sa, ScaleMode::vec128, p.m, p.k, p.seed, 3);
    make_block_scales(p.sb, ScaleMode::vec128, p.n, p.k, p.seed, 4);
  } else if (p.precision == "fp8_block_128x128") {
    make_block_scales(p.sa, ScaleMode::vec128, p.m, p.k, p.seed, 3);
    make_block_scales(p.sb, ScaleMode::blk128, p.n, p.k, p.seed, 4);
  }
  cuda_ok(cudaDeviceSynchronize(), "input generation");
}

// ---- Phase 4: the matmul description. cuBLASLt is column-major with D = op(A) op(B), m = M:
// a K-major A ([M, K] row-major) is its K x M matrix transposed, an M-major A its M x K matrix
// as is; a K-major B ([N, K]) is its K x N matrix as is, an N-major B its N x K matrix transposed.

using LayoutPtr = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutFree>;

LayoutPtr matrix_layout(cudaDataType_t t, long long rows, long long cols) {
  cublasLtMatrixLayout_t l = nullptr;
  lt_ok(cublasLtMatrixLayoutCreate(&l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols),
                                   rows),
        "cublasLtMatrixLayoutCreate");
  return LayoutPtr(l);
}

void set_fp8_scales(abh_problem& p) {
  cublasLtMatmulDesc_t desc = p.desc.get();
  const void* pa = p.sa.dev.get();
  const void* pb = p.sb.dev.get();
  set_attr(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &pa, sizeof pa, "A_SCALE_POINTER");
  set_attr(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &pb, sizeof pb, "B_SCALE_POINTER");
  if (p.precision == "fp8") return;  // scalar scales are cuBLASLt's default mode
  auto mode_of = [](ScaleMode m) -> int32_t {
    return m == ScaleMode::vec128 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
                                  : CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  };
  int32_t ma = mode_of(p.sa.mode), mb = mode_of(p.sb.mode);
  set_attr(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &ma, sizeof ma, "A_SCALE_MODE");
  set_attr(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mb, sizeof mb, "B_SCALE_MODE");
}

void describe_matmul(abh_problem& p, bool fp8) {
  cublasLtHandle_t h = nullptr;
  lt_ok(cublasLtCreate(&h), "cublasLtCreate");
  p.lt.reset(h);
  cublasLtMatmulDesc_t desc = nullptr;
  lt_ok(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate");
  p.desc.reset(desc);
  const cublasOperation_t opa = p.a_k_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opb = p.b_k_major ? CUBLAS_OP_N : CUBLAS_OP_T;
  set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa, "TRANSA");
  set_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb, "TRANSB");
  if (fp8) set_fp8_scales(p);
  p.la = p.a_k_major ? matrix_layout(cuda_type(p.ea), p.k, p.m)
                     : matrix_layout(cuda_type(p.ea), p.m, p.k);
  p.lb = p.b_k_major ? matrix_layout(cuda_type(p.eb), p.k, p.n)
                     : matrix_layout(cuda_type(p.eb), p.n, p.k);
  p.ld = matrix_layout(CUDA_R_16BF, p.m, p.n);
}

// ---- Phase 5: the tactics, the heuristic's candidates for this problem.

void find_candidates(abh_problem& p, const GpuInfo& gpu) {
  cublasLtMatmulPreference_t pref = nullptr;
  lt_ok(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  p.pref.reset(pref);
  const uint64_t ws = kWorkspaceBytes;
  lt_ok(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                             sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  cublasLtMatmulHeuristicResult_t results[kMaxCandidates] = {};
  int returned = 0;
  cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(p.lt.get(), p.desc.get(), p.la.get(), p.lb.get(), p.ld.get(),
                                     p.ld.get(), pref, kMaxCandidates, results, &returned);
  if (st != CUBLAS_STATUS_SUCCESS || returned == 0)
    throw Failure(
        ABH_ERR_UNSUPPORTED,
        "cuBLASLt " + std::to_string(cublasLtGetVersion()) + " has no algorithm for " +
            p.precision + " " + p.layout + " m=" + std::to_string(p.m) +
            " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) + " on " + gpu.name + " (" +
            (st != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusString(st) : "no candidate returned") +
            ")");
  for (int i = 0; i < returned; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) p.candidates.push_back(results[i].algo);
  if (p.candidates.empty())
    throw Failure(ABH_ERR_UNSUPPORTED, "cuBLASLt returned no usable candidate for this problem");
  p.algo = p.candidates.front();
}

void build(abh_problem& p, const nlohmann::json& j) {
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

std::string to_hex(const cublasLtMatmulAlgo_t& a) {
  static const char* digits = "0123456789abcdef";
  const auto* b = reinterpret_cast<const unsigned char*>(&a);
  std::string s;
  for (std::size_t i = 0; i < sizeof a; ++i) {
    s.push_back(digits[b[i] >> 4]);
    s.push_back(digits[b[i] & 15]);
  }
  return s;
}

int create(const char* params_json, abh_problem** out, char* err, size_t len) {
  auto p = std::make_unique<abh_problem>();
  int st = guarded(err, len, [&] {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(params_json);
    } catch (const std::exception& e) {
      throw Failure(ABH_ERR_INVALID_PARAMS, std::string("params are not JSON: ") + e.what());
    }
    if (!j.is_object()) throw Failure(ABH_ERR_INVALID_PARAMS, "params must be a JSON object");
    build(*p, j);
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

int verify(abh_problem* p, abh_verify_result* r, char* err, size_t len) {
  return guarded(err, len, [&] {
    RefResult ref;
    const OperandView a{p->a.get(), p->ea, p->sa.view(true), p->sta};
    const OperandView b{p->b.get(), p->eb, p->sb.view(true), p->stb};
    cuda_ok(reference_check(a, b, static_cast<const __nv_bfloat16*>(p->d.get()), p->m, p->n, p->k,
                            &ref, nullptr),
            "fp64 reference kernel");
    double worst = ref.max_err;
    // Host spot checks: corners, centre and seeded random elements.
    std::mt19937_64 rng(p->seed ^ 0x5eedull);
    for (int t = 0; t < kSpotChecks; ++t) {
      long long i, j;
      if (t < 4) {
        i = (t & 1) ? p->m - 1 : 0;
        j = (t & 2) ? p->n - 1 : 0;
      } else if (t == 4) {
        i = p->m / 2, j = p->n / 2;
      } else {
        i = static_cast<long long>(rng() % std::uint64_t(p->m));
        j = static_cast<long long>(rng() % std::uint64_t(p->n));
      }
      __nv_bfloat16 got_bf{};
      cuda_ok(cudaMemcpy(&got_bf, static_cast<const __nv_bfloat16*>(p->d.get()) + (i + j * p->m),
                         sizeof got_bf, cudaMemcpyDeviceToHost),
              "read back D element");
      double l2 = 0;
      const double want = host_element(*p, i, j, &l2);
      const double got = __bfloat162float(got_bf);
      double e = std::fabs(got - want) / std::max(std::fabs(want), l2 > 0 ? l2 : 1e-300);
      if (!std::isfinite(got)) e = INFINITY;
      worst = std::max(worst, e);
    }
    r->max_rel_error = worst;
    r->tolerance = p->precision == "bf16" ? 1.0 / 128 : 1.0 / 64;
    r->checked = static_cast<uint64_t>(p->m * p->n);
    std::snprintf(r->method, sizeof r->method,
                  "fp64 GPU reference on all %lld elements + %d host elements; "
                  "|d-ref|/max(|ref|,||a.*b||2)",
                  p->m * p->n, kSpotChecks);
    if (!(worst <= r->tolerance)) throw Failure(ABH_ERR_WRONG_RESULT, "output outside tolerance");
  });
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
  std::string key = lt_version_tag() + ":" + to_hex(p->candidates[static_cast<size_t>(index)]);
  if (key.size() + 1 > len) return ABH_ERR_INVALID_PARAMS;
  std::snprintf(buf, len, "%s", key.c_str());
  return ABH_OK;
}

int select_tactic(abh_problem* p, const char* key, char* err, size_t len) {
  return guarded(err, len, [&] {
    const std::string k = key ? key : "";
    const std::string tag = lt_version_tag() + ":";
    const std::size_t hex_len = 2 * sizeof(cublasLtMatmulAlgo_t);
    if (k.rfind("cublasLt", 0) != 0 || k.find(':') == std::string::npos)
      throw Failure(ABH_ERR_INVALID_PARAMS,
                    "'" + k + "' is not a cuBLASLt tactic key (expected \"" + tag + "<" +
                        std::to_string(hex_len) + " hex digits>\"): use --tactic auto");
    if (k.rfind(tag, 0) != 0)
      throw Failure(ABH_ERR_INVALID_PARAMS, "tactic key was made for " + k.substr(0, k.find(':')) +
                                                " but this is " + lt_version_tag() +
                                                ": algorithms are valid for one cuBLASLt version "
                                                "only; re-tune (--tactic auto)");
    const std::string hex = k.substr(tag.size());
    if (hex.size() != hex_len || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw Failure(ABH_ERR_INVALID_PARAMS, "tactic key '" + k + "' is damaged: expected " +
                                                std::to_string(hex_len) + " lowercase hex digits");
    cublasLtMatmulAlgo_t algo{};
    auto* b = reinterpret_cast<unsigned char*>(&algo);
    for (std::size_t i = 0; i < sizeof algo; ++i)
      b[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    cublasLtMatmulHeuristicResult_t check{};
    cublasStatus_t st =
        cublasLtMatmulAlgoCheck(p->lt.get(), p->desc.get(), p->la.get(), p->lb.get(), p->ld.get(),
                                p->ld.get(), &algo, &check);
    if (st != CUBLAS_STATUS_SUCCESS)
      throw Failure(ABH_ERR_INVALID_PARAMS,
                    std::string("cublasLtMatmulAlgoCheck rejects this tactic for ") + p->precision +
                        " m=" + std::to_string(p->m) + " n=" + std::to_string(p->n) +
                        " k=" + std::to_string(p->k) + " (" + cublasLtGetStatusString(st) +
                        "): it was tuned for another problem or GPU; re-tune (--tactic auto)");
    if (check.workspaceSize > kWorkspaceBytes)
      throw Failure(ABH_ERR_INVALID_PARAMS, "tactic needs " + std::to_string(check.workspaceSize) +
                                                " bytes of workspace, more than the plugin's " +
                                                std::to_string(kWorkspaceBytes));
    p->algo = algo;
  });
}

int library_versions(char* buf, size_t len) {
  int rt = 0;
  if (cudaRuntimeGetVersion(&rt) != cudaSuccess) return ABH_ERR_RUNTIME;
  std::snprintf(buf, len, "{\"cublasLt\":\"%zu\",\"cudart\":\"%d\"}", cublasLtGetVersion(), rt);
  return ABH_OK;
}

}  // namespace

ABH_PLUGIN_DEFINE("cublaslt-gemm", ABH_DEVICE_CUDA)
