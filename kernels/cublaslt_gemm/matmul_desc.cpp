// Phase 4 of a cuBLASLt GEMM problem (problem.hpp): the matmul's descriptor and its operands'
// layouts. cuBLASLt is column-major with D = op(A) op(B), m = M: a K-major A ([M, K] row-major)
// is its K x M matrix transposed, an M-major A its M x K matrix as is; a K-major B ([N, K]) is its
// K x N matrix as is, an N-major B its N x K matrix transposed.
#include <string>

#include "problem.hpp"

namespace cublaslt_gemm {
namespace {

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

void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const void* v,
              std::size_t size, const char* what) {
  lt_ok(cublasLtMatmulDescSetAttribute(d, a, v, size),
        std::string("cublasLtMatmulDescSetAttribute(") + what + ")");
}

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

}  // namespace

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

}  // namespace cublaslt_gemm
