"""Does where a kernel's memory lies set its time? Inside one process, the RMSNorm example's
kernels (eager PyTorch: intermediates allocated per call through the caching allocator; Triton:
none) are timed in trials of N isolated iterations each (synchronised, inputs rotated over buffer
sets covering twice the L2, as `kernel` timing does), each iteration's kernels summed from CUPTI
records (torch.profiler). Between trials the memory is either left alone (`fixed`: what one arm
sees), moved by holding a pad of random size in both of the caching allocator's pools (`pad`: the
per-call intermediates land elsewhere, the inputs stay), or reallocated whole behind a random pad
(`realloc`: inputs and intermediates move, as in a new process). Prints per kernel, shape and
mode the trials' medians, their spread (max/min - 1) and sigma (sd of their logs).

If `fixed` trials agree to about 0.1 % while `pad` or `realloc` trials fall into levels as far
apart as fresh processes are (bench/process_spread.sh), the process-to-process spread is the
placement of memory, which moving it inside an arm averages out.

usage: python3 bench/placement_probe.py [--rows 1,4] [--hidden 4096,8192] [--iters 600]
           [--trials 4,10,6] [--json out.json]
"""
import argparse
import importlib.util
import json
import math
import os
import random
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                       "python-rmsnorm")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Sets:
    """Inputs and outputs of one shape, enough sets to cover twice the L2."""

    def __init__(self, rows, hidden, pad_bytes=0):
        self.pad = torch.empty(pad_bytes, dtype=torch.uint8, device="cuda") if pad_bytes else None
        set_bytes = 2 * (2 * rows * hidden + hidden)
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        n = max(2, math.ceil(2 * l2 / set_bytes))
        self.x = torch.randn((n, rows, hidden), device="cuda", dtype=torch.bfloat16)
        self.w = 1 + 0.1 * torch.randn((n, hidden), device="cuda", dtype=torch.bfloat16)
        self.out = torch.empty_like(self.x)
        self.n = n


def iteration_times(fn, sets, iters, start):
    """ns per iteration: each iteration's kernels summed, from the profiler's CUPTI records."""
    for i in range(20):
        j = (start + i) % sets.n
        fn(sets.x[j], sets.w[j], sets.out[j], 1e-6)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(iters):
            j = (start + 20 + i) % sets.n
            fn(sets.x[j], sets.w[j], sets.out[j], 1e-6)
            torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))
    kernels = sorted((e["ts"], e["dur"]) for e in trace["traceEvents"]
                     if e.get("cat") == "kernel")
    per = len(kernels) // iters
    if per * iters != len(kernels):
        raise SystemExit("%d kernel records for %d iterations" % (len(kernels), iters))
    return [1000 * sum(d for _, d in kernels[i * per:(i + 1) * per]) for i in range(iters)], per


def pads():
    """A small-pool and a large-pool allocation of random size, held until the next call."""
    return (torch.empty(512 * random.randrange(1, 2048), dtype=torch.uint8, device="cuda"),
            torch.empty(512 * random.randrange(4096, 81920), dtype=torch.uint8, device="cuda"))


def probe(fn, rows, hidden, iters, trials):
    out = {}
    for mode, count in zip(("fixed", "pad", "realloc"), trials):
        medians, held = [], None
        sets = Sets(rows, hidden)
        for t in range(count):
            if mode == "pad":
                held = None
                held = pads()
            elif mode == "realloc":
                sets = None
                torch.cuda.empty_cache()
                sets = Sets(rows, hidden, 512 * random.randrange(1, 400000))
            times, per = iteration_times(fn, sets, iters, random.randrange(sets.n))
            medians.append(statistics.median(times))
        logs = [math.log(m) for m in medians]
        out[mode] = {"medians": medians, "kernels": per,
                     "spread": max(medians) / min(medians) - 1,
                     "sigma": statistics.stdev(logs) if len(logs) > 1 else 0.0}
        del sets, held
        torch.cuda.empty_cache()
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default="1,4,64")
    p.add_argument("--hidden", default="4096,8192")
    p.add_argument("--iters", type=int, default=600)
    p.add_argument("--trials", default="4,10,6")
    p.add_argument("--kernels", default="kernel_eager,kernel_triton")
    p.add_argument("--json")
    a = p.parse_args()
    trials = [int(t) for t in a.trials.split(",")]
    results = []
    for name in a.kernels.split(","):
        fn = load(name).rmsnorm
        for h in a.hidden.split(","):
            for r in a.rows.split(","):
                res = probe(fn, int(r), int(h), a.iters, trials)
                results.append({"kernel": name, "shape": "r%s_h%s" % (r, h), "modes": res})
                line = "  ".join("%s %d x: %.0f-%.0f ns spread %.2f %% sigma %.2f %%" % (
                    m, len(v["medians"]), min(v["medians"]), max(v["medians"]),
                    100 * v["spread"], 100 * v["sigma"]) for m, v in res.items())
                print("%-13s r%s_h%s (%d kernels)  %s" % (name, r, h, res["fixed"]["kernels"],
                                                           line), flush=True)
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
