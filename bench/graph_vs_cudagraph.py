#!/usr/bin/env python3
"""Times the spin plugin's kernel with triton.testing.do_bench_cudagraph, through the plugin's own
ABI (ctypes): the same kernel, launched by the same enqueue() the worker captures, on the stream
Triton captures. Warm L2, as do_bench_cudagraph has it. Prints one line per duration:
`spin <us> us: do_bench_cudagraph median <ns> ns over <calls> calls (min .., max ..)`.

usage: graph_vs_cudagraph.py LIBABH_SPIN_SO DURATION_US... (CALLS=10 calls of do_bench_cudagraph
each, each returning the median of its replays)
"""
import ctypes
import json
import os
import statistics
import sys

import torch
import triton.testing

lib_path, durations = sys.argv[1], [float(x) for x in sys.argv[2:]]
calls = int(os.environ.get("CALLS", "10"))

ERR = ctypes.c_char * 1024
CREATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                          ctypes.c_char_p, ctypes.c_size_t)
ENQUEUE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                           ctypes.c_size_t)


class PluginV1(ctypes.Structure):
    # The leading fields of abh_plugin_v1 (include/abharness/plugin.h), as far as enqueue.
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("device", ctypes.c_int), ("create", CREATE), ("enqueue", ENQUEUE)]


lib = ctypes.CDLL(lib_path)
lib.abh_plugin_entry.restype = ctypes.POINTER(PluginV1)
lib.abh_plugin_entry.argtypes = [ctypes.c_uint32]
torch.cuda.init()
torch.zeros(1, device="cuda")  # the primary context, current before the plugin allocates
table = lib.abh_plugin_entry(2).contents
err = ERR()
for us in durations:
    prob = ctypes.c_void_p()
    params = json.dumps({"mode": "spin", "duration_us": us, "buffer_sets": False}).encode()
    if table.create(params, ctypes.byref(prob), err, len(err)) != 0:
        sys.exit(f"create({params}): {err.value.decode()}")

    def fn(prob=prob):
        rc = table.enqueue(prob, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), err,
                           len(err))
        if rc != 0:
            raise RuntimeError(err.value.decode())

    got = [triton.testing.do_bench_cudagraph(fn, return_mode="median") * 1e6 for _ in range(calls)]
    print(f"spin {us:g} us: do_bench_cudagraph median {statistics.median(got):.0f} ns over {calls} "
          f"calls (min {min(got):.0f}, max {max(got):.0f})", flush=True)
