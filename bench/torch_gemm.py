"""torch.matmul as an abharness Python plugin, laid out as the cuBLASLt C++ plugin's GEMM
(kernels/cublaslt_gemm, docs/gpu.md), so that cuBLAS may choose the same kernel for both:
D (M x N, column-major) = A (M x K) . B (N x K)^T, bf16 in and out, fp32 accumulation.

In row-major torch terms D is the (N, M) tensor b @ a.T: torch hands cuBLAS m=M, n=N, k=K with
A transposed and B not (TRANSA=T, TRANSB=N), the C++ plugin's call. bench/python_vs_cublaslt.sh
measures both.
"""
import torch

import abharness

# The C++ plugin reduces in fp32; so does this one.
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False


class Gemm(abharness.ProblemBase):
    tolerance = 2.0 ** -7  # bf16 output rounding 2^-8, doubled for fp32 accumulation (docs/gpu.md)

    def __init__(self, params):
        if params.get("precision", "bf16") != "bf16":
            raise abharness.Unsupported("torch_gemm computes bf16 only, not %s"
                                        % params["precision"])
        m, n, k = (int(params[d]) for d in "mnk")
        g = torch.Generator(device="cuda").manual_seed(int(params.get("seed", 1)))
        self.a = torch.empty((m, k), device="cuda", dtype=torch.bfloat16).uniform_(-1, 1,
                                                                                  generator=g)
        self.b = torch.empty((n, k), device="cuda", dtype=torch.bfloat16).uniform_(-1, 1,
                                                                                  generator=g)
        self.d = torch.full((n, m), float("nan"), device="cuda", dtype=torch.bfloat16)
        self.flops = 2.0 * m * n * k
        self.bytes = 2.0 * (m * k + n * k + m * n)

    def run(self):
        torch.matmul(self.b, self.a.t(), out=self.d)

    def verify(self):
        a, b = self.a.double(), self.b.double()
        ref = torch.matmul(b, a.t())
        scale = torch.maximum(ref.abs(), torch.outer(b.norm(dim=1), a.norm(dim=1)))
        err = ((self.d.double() - ref).abs() / scale).max().item()
        return abharness.Verification(err, self.tolerance, self.d.numel(),
                                      "torch.matmul fp64 reference, full output")


def make_problem(params):
    return Gemm(params)
