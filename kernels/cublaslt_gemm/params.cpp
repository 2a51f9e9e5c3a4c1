// Phases 1 and 2 of a cuBLASLt GEMM problem (problem.hpp): its parameters, and whether this GPU
// and cuBLASLt can run them.
#include <cstdint>
#include <string>
#include <utility>

#include "problem.hpp"

namespace cublaslt_gemm {
namespace {

constexpr long long kMaxDim = 1 << 16;

Elem parse_fp8(const abh_plugin::Params& j, const char* key) {
  const std::string t = j.optional_string(key, "e4m3");
  if (t == "e4m3") return Elem::e4m3;
  if (t == "e5m2") return Elem::e5m2;
  j.fail(key, "must be \"e4m3\" or \"e5m2\", got \"" + t + "\"");
}

// ---- Phase 1: read the parameters. Every key of the grid vocabulary (docs/grids.md) is checked
// against what this plugin runs; an unknown key or a value it would not honour is refused, never
// ignored (a layout or scale silently substituted would label one GEMM's time with another's name).

// A key that only describes the GEMM (written by `abharness grid --model`) must describe the one
// this plugin runs.
void expect_value(const abh_plugin::Params& j, const char* key, const std::string& runs,
                  const std::string& precision) {
  if (!j.has(key) || j.raw(key) == "\"" + runs + "\"") return;
  throw Failure(ABH_ERR_UNSUPPORTED, "shape " + j.shape() + ": param '" + key + "' is " +
                                         j.raw(key) + ", but precision \"" + precision +
                                         "\" runs " + key + " \"" + runs + "\" in this plugin");
}

// "layout" (docs/grids.md): letter 0 is operand B's storage ('T' = [N, K], 'N' = [K, N]),
// letter 1 operand A's ('N' = [M, K], 'T' = [K, M]).
void read_layout(abh_problem& p, const abh_plugin::Params& j, bool fp8) {
  p.layout = j.optional_string("layout", "TN");
  if (p.layout.size() != 2 || std::string("TN").find(p.layout[0]) == std::string::npos ||
      std::string("NT").find(p.layout[1]) == std::string::npos)
    j.fail("layout", "must be \"TN\", \"NN\", \"NT\" or \"TT\", got " + j.raw("layout"));
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

}  // namespace

// The parameters' own checks (abh_plugin::Params) refuse a malformed value as invalid params.
bool read_params(abh_problem& p, const abh_plugin::Params& j) {
  j.only({"m", "n", "k", "precision", "seed", "layout", "a_type", "b_type", "d_type", "a_scale",
          "b_scale"});
  p.m = j.required_int("m", 1, kMaxDim);
  p.n = j.required_int("n", 1, kMaxDim);
  p.k = j.required_int("k", 1, kMaxDim);
  p.seed = static_cast<std::uint64_t>(j.optional_int("seed", 1, 0));
  p.precision = j.optional_string("precision", "bf16");
  const bool fp8 = p.precision != "bf16";
  if (fp8 && p.precision != "fp8" && p.precision != "fp8_block_1x128" &&
      p.precision != "fp8_block_128x128" && p.precision != "mxfp8" && p.precision != "nvfp4")
    j.fail("precision",
           "must be one of bf16, fp8, fp8_block_1x128, fp8_block_128x128, mxfp8, nvfp4; got \"" +
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

}  // namespace cublaslt_gemm
