"""The GPU frameworks a Python plugin brings (torch, cupy): the worker's stream made their current
stream, their queued work waited for, and the CUDA libraries they mapped named in the log."""

import os
import sys

from .errors import log


class FrameworkStreams:
    """The worker's stream (a raw cudaStream_t, None on the CPU), made current in each framework
    once that framework is loaded."""

    def __init__(self):
        self.stream = None
        self.bound = set()

    def bind(self):
        """Makes the worker's stream the current stream of the GPU frameworks loaded so far, so
        that code enqueuing on "the current stream" (torch ops, Triton launches) uses it."""
        if not self.stream:
            return
        torch = sys.modules.get("torch")
        if torch is not None and "torch" not in self.bound:
            torch.cuda.set_stream(torch.cuda.ExternalStream(self.stream))
            self.bound.add("torch")
        cupy = sys.modules.get("cupy")
        if cupy is not None and "cupy" not in self.bound:
            cupy.cuda.ExternalStream(self.stream).use()
            self.bound.add("cupy")

    def all_bound(self):
        return len(self.bound) == 2

    @staticmethod
    def synchronize():
        """Waits for work make_problem may have queued on other streams (a framework imported
        inside it, before its stream was bound)."""
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            cupy.cuda.Device().synchronize()


def log_cuda_libraries():
    """Names the CUDA libraries mapped into the process: torch and triton bring their own runtime
    and CUPTI, and two copies of CUPTI in one process is the thing to look for when kernel times
    look wrong (docs/python.md)."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split(None, 5)[5].strip() for line in f
                        if line.count(" ") >= 5 and "/lib" in line
                        and any(n in line for n in ("libcudart", "libcupti", "libcublas"))})
    cupti = {os.path.realpath(p) for p in paths if "libcupti" in p}
    log("CUDA libraries mapped: %s%s" % (", ".join(paths) or "none",
                                         "; WARNING: %d copies of CUPTI" % len(cupti)
                                         if len(cupti) > 1 else ""))
