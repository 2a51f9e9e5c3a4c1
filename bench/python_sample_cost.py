"""Host cost of the pieces of one Python kernel-timing sample, without the engine: what the user's
run() costs by itself (the Triton launcher, or eager PyTorch's dispatch), with the buffer-set switch
before it, through a ctypes callback as the engine calls it, and as the replay of a CUDA graph of
one iteration. Each is timed over N calls with the GPU left to run behind (one synchronisation at
the end), so the figure is the host's cost per call while the GPU keeps up, as in an arm's batch.

usage: python3 bench/python_sample_cost.py [ROWS] [HIDDEN] [N]   (on a GPU machine; needs torch
and triton). Compare with an arm's samples per second in its worker log ("N samples" over the
sampling phase).
"""
import ctypes
import importlib
import statistics
import sys
import time
from pathlib import Path

import torch

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "examples" / "python-rmsnorm"))
sys.path.insert(0, str(root / "python"))


def per_call_us(fn, n, repeats=5):
    """Median over `repeats` of the host time per call of n calls, then one synchronisation."""
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append((t1 - t0) / n * 1e6)
    return statistics.median(times)


def problem(kernel_module, rows, hidden, sets):
    import bench  # examples/python-rmsnorm/bench

    sys.modules["bench.kernel"] = importlib.import_module(kernel_module)
    bench.kernel = sys.modules["bench.kernel"]
    rmsnorm = importlib.reload(importlib.import_module("bench.rmsnorm"))
    p = rmsnorm.make_problem({"rows": rows, "hidden": hidden})
    p.make_buffer_sets(sets)
    return p


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    sets = 64
    CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
    print(f"torch {torch.__version__}, rows {rows}, hidden {hidden}, {n} calls per timing")
    for name in ("kernel_triton", "kernel_eager"):
        p = problem(name, rows, hidden, sets)
        for i in range(50):  # first launches (Triton compiles here)
            p.run()
        torch.cuda.synchronize()
        row = {}
        row["run()"] = per_call_us(lambda i: p.run(), n)
        row["use_buffer_set + run()"] = per_call_us(
            lambda i: (p.use_buffer_set(i % sets), p.run()), n)

        def both(i):
            p.use_buffer_set(i % sets)
            p.run()
            return 0

        cb = CALLBACK(both)
        row["the same through a ctypes callback"] = per_call_us(lambda i: cb(i), n)
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            p.run()
            torch.cuda.synchronize()
            with torch.cuda.graph(g, stream=s):
                p.run()
        torch.cuda.synchronize()
        row["graph of one iteration, replayed"] = per_call_us(lambda i: g.replay(), n)
        print(name)
        for k, v in row.items():
            print(f"  {k:40s} {v:7.2f} us per call")


if __name__ == "__main__":
    main()
