#!/usr/bin/env python3
"""Independent timing of a bf16 GEMM through PyTorch, for comparison with the cuBLASLt plugin
measured by the worker: same problem (A: M x K, B: N x K, D = A B^T, uniform [-1, 1) data), cold
L2 (a 2x-L2 buffer is zeroed before every product, as the worker does), median of CUDA events,
plus the kernel names and CUPTI kernel durations that PyTorch's profiler (Kineto) reports.

usage: torch_gemm_ref.py M N K [iterations]
"""
import statistics
import sys

import torch


def main():
    m, n, k = (int(x) for x in sys.argv[1:4])
    iters = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(0)
    g = torch.Generator(device=dev).manual_seed(1)
    a = (torch.rand(m, k, device=dev, generator=g) * 2 - 1).bfloat16()
    b = (torch.rand(n, k, device=dev, generator=g) * 2 - 1).bfloat16()
    l2 = getattr(props, "L2_cache_size", 60 * 1024 * 1024)
    flush = torch.empty(2 * l2 // 4 + 1, dtype=torch.int32, device=dev)
    for _ in range(10):
        a @ b.t()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(iters):
        flush.fill_(i)
        start.record()
        a @ b.t()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e6)  # ns
    med = statistics.median(times)
    print(f"torch events: median {med:.0f} ns over {iters} (min {min(times):.0f}, max {max(times):.0f})")
    print(f"torch events: {2.0 * m * n * k / med / 1e3:.1f} TFLOP/s")

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(30):
            flush.fill_(i)
            a @ b.t()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        name = e.name
        if "fill" in name.lower() or "memset" in name.lower():
            continue
        t = getattr(e, "device_time", None)
        if t is None:
            t = getattr(e, "cuda_time", 0)
        if t:
            per.setdefault(name, []).append(t * 1e3)  # us -> ns
    for name, ts in per.items():
        print(f"torch profiler (CUPTI): {name[:110]}: median {statistics.median(ts):.0f} ns x{len(ts)}")


if __name__ == "__main__":
    main()
