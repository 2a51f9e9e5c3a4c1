// Phase 3 of a cuBLASLt GEMM problem (problem.hpp): its operands and scales, generated on the GPU.
#include <cmath>
#include <cstdint>

#include "problem.hpp"

namespace cublaslt_gemm {
namespace {

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

}  // namespace cublaslt_gemm
