// The verification tolerance of the cuBLASLt GEMM plugin: how far a correct cuBLASLt output may
// lie from the fp64 reference, as a function of the precision and K. Plain C++ (no CUDA headers) so
// that the unit tests check it without a GPU; the derivation is in tolerance.cpp and docs/gpu.md
// ("Correctness and tolerance").
#pragma once

#include <string_view>

namespace cublaslt_gemm {

// The largest error |D - ref| / max(|ref|, ||a_i .* b_j||_2) a correct output of `precision`
// ("bf16" or one of the "fp8..." precisions) with reduction depth `k` (>= 1) may have. Throws
// std::invalid_argument for another precision or k < 1.
double gemm_tolerance(std::string_view precision, long long k);

}  // namespace cublaslt_gemm
