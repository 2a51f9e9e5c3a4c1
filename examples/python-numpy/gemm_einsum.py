"""Candidate: the GEMM as one einsum, which NumPy evaluates in its own vectorized loops (no BLAS,
so the comparison does not depend on which BLAS the machine has)."""
import numpy as np


def gemm(a, b, c):
    np.einsum("ik,kj->ij", a, b, out=c)
