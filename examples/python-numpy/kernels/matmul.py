"""A float32 GEMM, C = A @ B, as an abharness Python problem that runs on the CPU (NumPy).

The kernel under test is kernels/gemm.py; this file makes the inputs and checks the output, and is
the same in both revisions, as in a real kernel pull request.
"""
import numpy as np

import abharness
from kernels.gemm import gemm


class Matmul(abharness.ProblemBase):
    # |C - ref| / (|A| @ |B|): fp32 accumulation over k terms stays far below this for k <= 4096.
    tolerance = 1e-4

    def __init__(self, params):
        m, n, k = (int(params[d]) for d in "mnk")
        rng = np.random.default_rng(int(params.get("seed", 1)))
        self.a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        self.b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        self.c = np.full((m, n), np.nan, np.float32)  # an element no iteration writes fails
        self.flops = 2.0 * m * n * k
        self.bytes = 4.0 * (m * k + k * n + m * n)

    def run(self):
        gemm(self.a, self.b, self.c)

    def verify(self):
        a, b = self.a.astype(np.float64), self.b.astype(np.float64)
        ref = a @ b
        scale = np.maximum(np.abs(a) @ np.abs(b), np.finfo(np.float64).tiny)
        err = float(np.max(np.abs(self.c - ref) / scale))
        return abharness.Verification(err, self.tolerance, self.c.size,
                                      "fp64 NumPy reference, full output, |C-ref|/(|A|@|B|)")


def make_problem(params):
    return Matmul(params)
