#!/usr/bin/env python3
"""The usual throw-away script, for comparison: one process per arm imports the RMSNorm kernel of
one revision, makes the inputs of each shape and times it with triton.testing.do_bench (CUDA
events around each call, an L2 flush before each; host launch work included). Prints one line per
shape: "<shape> <median ms>".

usage: usual_rmsnorm.py REPO_CHECKOUT GRID_JSON
"""
import json
import sys

import torch
import triton

sys.path.insert(0, sys.argv[1])
from bench import kernel  # noqa: E402  (the revision checked out in REPO_CHECKOUT)

for shape in json.load(open(sys.argv[2]))["shapes"]:
    p = shape["params"]
    x = torch.randn((p["rows"], p["hidden"]), device="cuda", dtype=torch.bfloat16)
    w = torch.ones((p["hidden"],), device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    ms = triton.testing.do_bench(lambda: kernel.rmsnorm(x, w, out, 1e-6), return_mode="median")
    print(shape["id"], ms, flush=True)
