"""A bf16 GEMM, C = A @ B, as an abharness Python problem on the GPU (Triton, PyTorch).

The kernel under test is bench/kernel.py: its CONFIGS are this problem's tactics, which the
worker times and caches like cuBLASLt's algorithms. This file makes the inputs and checks the
output against torch.matmul in fp64; it is the same in both revisions.
"""
import torch

import abharness
from bench import kernel


class Matmul(abharness.Tuned):
    # The bf16 output rounding is <= 2^-8 of |ref|; doubled for fp32 accumulation (as the cuBLASLt
    # plugin's tolerance, docs/gpu.md).
    tolerance = 2.0 ** -7

    def __init__(self, params):
        if params.get("precision", "bf16") != "bf16":
            raise abharness.Unsupported("this example computes bf16 only, not %s"
                                        % params["precision"])
        m, n, k = (int(params[d]) for d in "mnk")
        g = torch.Generator(device="cuda").manual_seed(int(params.get("seed", 1)))
        self.a = torch.randn((m, k), device="cuda", dtype=torch.bfloat16, generator=g)
        self.b = torch.randn((k, n), device="cuda", dtype=torch.bfloat16, generator=g)
        self.c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        self.flops = 2.0 * m * n * k
        self.bytes = 2.0 * (m * k + k * n + m * n)
        self.configs = {kernel.key(c): c for c in kernel.CONFIGS}
        self.config = kernel.CONFIGS[0]

    def tactics(self):
        return list(self.configs)

    def select(self, key):
        self.config = self.configs[key]

    def run(self):
        kernel.matmul(self.a, self.b, self.c, self.config)

    def verify(self):
        a, b = self.a.double(), self.b.double()
        ref = torch.matmul(a, b)
        # Relative where the result is large, relative to the natural size of a sum of random
        # products (|a_i| |b_j|) where it cancels towards zero.
        scale = torch.maximum(ref.abs(), torch.outer(a.norm(dim=1), b.norm(dim=0)))
        err = ((self.c.double() - ref).abs() / scale).max().item()
        return abharness.Verification(err, self.tolerance, self.c.numel(),
                                      "torch.matmul fp64 reference, full output")


def make_problem(params):
    return Matmul(params)
