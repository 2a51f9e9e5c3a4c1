"""Where a Triton kernel's first call in a fresh process goes, and how much of it needs the GPU.

A Python arm of a Triton kernel spends about 0.54 s in its warm-up's first call (docs/measurements.md
section 40), each arm a fresh process. This runs the RMSNorm example's Triton kernel in a fresh
interpreter the way an arm does (import, then a CUDA context, then the first call) and prints, as one
JSON line, the seconds of each step; with --prime, it first calls what can be done without a CUDA
context (Triton's compiler key, the kernel's cache key) and times those apart. With --profile, the
first call's 25 most expensive functions (cumulative) go to stderr.

usage: python3 bench/triton_first_call.py [--prime] [--profile]   (after one call filled the cache)
"""
import cProfile
import io
import json
import os
import pstats
import sys
import time

t0 = time.perf_counter()
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "examples", "python-rmsnorm"))
import torch  # noqa: E402
import triton  # noqa: E402
import kernel_triton  # noqa: E402

steps = {"import": time.perf_counter() - t0}


def timed(name, fn):
    t = time.perf_counter()
    out = fn()
    steps[name] = time.perf_counter() - t
    return out


if "--prime" in sys.argv:
    try:  # where it lives since triton 3.5, then where it lived before
        from triton.runtime.cache import triton_key
    except ImportError:
        from triton.compiler.compiler import triton_key
    timed("prime: triton_key", triton_key)
    timed("prime: kernel cache_key", lambda: kernel_triton.rmsnorm_kernel.cache_key)
timed("cuda context", lambda: torch.zeros(1, device="cuda"))
x = torch.randn((4, 4096), device="cuda", dtype=torch.bfloat16)
w = torch.randn((4096,), device="cuda", dtype=torch.bfloat16)
out = torch.empty_like(x)
torch.cuda.synchronize()
prof = cProfile.Profile() if "--profile" in sys.argv else None


def first_call():
    if prof:
        prof.enable()
    kernel_triton.rmsnorm(x, w, out, 1e-6)
    torch.cuda.synchronize()
    if prof:
        prof.disable()


timed("first call", first_call)
timed("second call", lambda: (kernel_triton.rmsnorm(x, w, out, 1e-6), torch.cuda.synchronize()))
print(json.dumps({k: round(v, 4) for k, v in steps.items()}))
if prof:
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
    sys.stderr.write(s.getvalue())
