"""Baseline: the GEMM as k rank-1 updates, C += outer(A[:, p], B[p]), one NumPy call each."""
import numpy as np


def gemm(a, b, c):
    c[:] = 0
    for p in range(a.shape[1]):
        c += np.multiply.outer(a[:, p], b[p])
