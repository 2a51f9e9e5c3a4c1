"""Helpers for writing an abharness Python plugin (docs/python.md).

Optional: a plain class with run() and verify() is a complete problem. This module names the
protocol for type checkers, gives verify() a typed way to report, and says which stream the
worker measures on. The Python front end puts it on the import path of every Python arm (it is
part of the worker, hashed into its identity), so `import abharness` works in a plugin without
installing it. (Its _front_end subpackage is that front end, not for plugins.)

    import abharness

    class Matmul(abharness.ProblemBase):
        tolerance = 1e-5

        def __init__(self, params): ...
        def run(self): ...                      # enqueue one iteration on the current stream
        def verify(self): return max_error      # or raise AssertionError / abharness.WrongResult

    def make_problem(params):
        return Matmul(params)
"""

from typing import List, Protocol, Union, runtime_checkable

__all__ = ["Problem", "ProblemBase", "Tuned", "Verification", "WrongResult", "Unsupported",
           "current_stream"]

_stream = 0


class Verification:
    """What verify() may return instead of a bare max error."""

    __slots__ = ("max_error", "tolerance", "checked", "method")

    def __init__(self, max_error: float, tolerance: float, checked: int = 0, method: str = ""):
        # e.g. max |out - ref| / scale over the checked elements
        self.max_error = _as_number(max_error, "Verification's max_error")
        # the result is wrong when max_error > tolerance
        self.tolerance = _as_number(tolerance, "Verification's tolerance")
        self.checked = int(checked)  # how many output elements were compared
        self.method = method  # e.g. "torch.matmul in fp32, full output" (first 127 bytes kept)

    def __repr__(self) -> str:
        return "Verification(max_error=%g, tolerance=%g, checked=%d, method=%r)" % (
            self.max_error, self.tolerance, self.checked, self.method)


def _as_number(value, what: str) -> float:
    """`value` as a float when it is a number (int, float, a NumPy scalar, a one-element tensor),
    a TypeError naming `what` otherwise. float() alone would turn True into 1.0, False into 0.0
    and "0.5" into 0.5: a check that returned the wrong thing would read as a measured error."""
    dtype = str(getattr(value, "dtype", ""))
    if (isinstance(value, (bool, str, bytes)) or dtype in ("bool", "torch.bool")
            or not hasattr(type(value), "__float__")):
        raise TypeError("%s %r (%s), which is not a number" % (what, value, type(value).__name__))
    try:
        return float(value)
    except (TypeError, ValueError) as e:  # e.g. a tensor of several elements
        raise TypeError("%s %r (%s), which is not one number: %s"
                        % (what, value, type(value).__name__, e))


class WrongResult(AssertionError):
    """Raised by verify(): the output is wrong. The arm fails (exit 4) and writes no result.
    Any AssertionError (numpy.testing, torch.testing.assert_close) means the same."""


class Unsupported(Exception):
    """Raised by make_problem: a valid request this machine cannot run (e.g. fp8 on a GPU
    without it). The arm fails as unsupported (exit 5), naming the reason."""


@runtime_checkable
class Problem(Protocol):
    """What make_problem(params) returns. Only run() and verify() are required; the front end
    also reads, when present: `flops` and `bytes` (numbers, or methods returning them: useful
    floating-point operations and compulsory memory traffic per iteration), `tolerance` (when
    verify() returns a bare number), and tactics() with select(key)."""

    def run(self) -> None:
        """Enqueue exactly one iteration (on the current stream for GPU work); do not wait."""

    def verify(self) -> Union[float, Verification]:
        """Check the output of the last iteration; return the max error or raise."""


class ProblemBase:
    """An optional base class with the protocol's optional parts filled in: no tactics, flops
    and bytes of 0 (the report then has no throughput or speed-of-light for the shape)."""

    flops: float = 0.0
    bytes: float = 0.0

    def run(self) -> None:
        raise NotImplementedError("run(): enqueue one iteration")

    def verify(self) -> Union[float, Verification]:
        raise NotImplementedError("verify(): return the max error, or raise on a wrong output")


class Tuned(ProblemBase):
    """A base class for problems with several tactics (e.g. Triton configs): the worker times
    each key of tactics() and select()s the fastest, and caches the choice like cuBLASLt's."""

    def tactics(self) -> List[str]:
        raise NotImplementedError("tactics(): the keys, each naming one tactic fully")

    def select(self, key: str) -> None:
        raise NotImplementedError("select(key): use the tactic `key` from now on")


def current_stream() -> int:
    """The raw cudaStream_t the worker enqueues on and times (0 for a CPU plugin, and before
    the worker opened its device). torch and cupy already have it as their current stream; pass
    it to anything else that launches GPU work (numba.cuda.external_stream, cuda-python)."""
    return _stream


def _set_stream(stream: int) -> None:  # the front end's, when the worker's device session opens
    global _stream
    _stream = stream
