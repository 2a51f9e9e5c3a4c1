"""The GPU frameworks a Python plugin brings (torch, cupy): the worker's stream made their current
stream, their queued work waited for, graphs captured through the framework that must know of a
capture (torch), and the CUDA libraries they mapped named in the log."""

import importlib
import os
import sys
import time

from .errors import error_reason, log


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


class CapturedGraphs:
    """CUDA graphs of a problem's iterations, captured and replayed through PyTorch.

    A capture the engine began on the raw stream would leave torch's caching allocator unaware:
    run() could not allocate (eager PyTorch allocates every intermediate), and memory the graph
    uses could be handed out again behind its back. torch.cuda.graph gives the capture a private
    memory pool instead, so the front end captures through it whenever torch is loaded (the
    problem then declares ABH_CAP_OWN_GRAPHS); the engine still owns the timing, around
    replay()."""

    def __init__(self, streams):
        self.streams = streams
        self.graphs = {}  # handle -> torch.cuda.CUDAGraph
        self.made = 0
        self.external = {}  # raw stream -> torch.cuda.ExternalStream

    @staticmethod
    def framework():
        """The framework that captures, or None: the engine captures then."""
        return sys.modules.get("torch")

    def _stream(self, torch, stream):
        if stream not in self.external:
            self.external[stream] = torch.cuda.ExternalStream(stream)
        return self.external[stream]

    def capture(self, problem, stream, iterations, sets):
        """Captures `iterations` calls of run(), iteration i on buffer set i % sets when there are
        several; the handle of the graph (> 0)."""
        torch = self.framework()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=self._stream(torch, stream)):
            for i in range(iterations):
                if sets > 1:
                    problem.obj.use_buffer_set(i % sets)
                problem.obj.run()
        self.made += 1
        self.graphs[self.made] = graph
        return self.made

    def replay(self, handle, stream):
        torch = self.framework()
        with torch.cuda.stream(self._stream(torch, stream)):
            self.graphs[handle].replay()

    def destroy(self, handle):
        graph = self.graphs.pop(handle, None)
        if graph is not None:
            graph.reset()


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


# What a Triton kernel's first launch in a fresh process does on the CPU alone: it hashes Triton's
# own installation into its compile-cache key (0.39 s of a 0.60 s first call on the H200 machine,
# triton 3.6, bench/triton_first_call.py) and imports the Gluon descriptor types that its argument
# specialisation checks against (0.18 s). Neither touches the GPU, so an arm started ahead does
# both before its turn, while another arm measures. Each step names the modules it may be found
# in, newest first, and the function to call there (None: importing is the step).
_TRITON_PRIMES = (
    ("compile-cache key", ("triton.runtime.cache", "triton.compiler.compiler"), "triton_key"),
    ("Gluon descriptor types", ("triton.experimental.gluon.nvidia.hopper",), None),
)


def _prime(modules, function):
    failure = None
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            failure = e
            continue
        if function is None:
            return
        if hasattr(module, function):
            getattr(module, function)()
            return
        failure = AttributeError("%s has no %s()" % (name, function))
    raise failure


def prime_triton():
    """Does a Triton kernel's first-launch CPU work now, when the user's module imported Triton.
    A step this Triton version lacks is logged and left to the first launch, which then pays it
    inside the arm's warm-up as before (the warm-up is never timed)."""
    if "triton" not in sys.modules:
        return
    done, missed = [], []
    for what, modules, function in _TRITON_PRIMES:
        start = time.perf_counter()
        try:
            _prime(modules, function)
            done.append("%s %.2f s" % (what, time.perf_counter() - start))
        except Exception as e:
            missed.append("%s (%s)" % (what, error_reason(e)))
    log("Triton's first-launch work done ahead: %s%s" % (
        ", ".join(done) or "none",
        "; not done, left to the first launch: " + ", ".join(missed) if missed else ""))
