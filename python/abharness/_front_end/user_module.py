"""The user's module and the problem object its entry makes, checked against the protocol
(docs/python.md) once, when each is made."""

import numbers
import os
import sys

import abharness

from . import protocol
from .errors import FrontEndError, ProtocolError, error_reason, print_traceback

# The one tactic of a problem without tactics().
DEFAULT_TACTIC = "default"


def _inside(path, directory):
    return path is not None and os.path.realpath(path).startswith(directory + os.sep)


def import_entry(arm, helper_dir):
    """The plugin's entry function, imported from the variant's sources and nowhere else."""
    import importlib

    spec = arm.python
    sys.path[:0] = [arm.src, helper_dir]
    try:
        module = importlib.import_module(spec["module"])
    except BaseException as e:
        print_traceback()
        raise FrontEndError("cannot import module %s from the %s sources %s: %s"
                            % (spec["module"], arm.variant, arm.src, error_reason(e)))
    top = sys.modules[spec["module"].split(".")[0]]
    for m in (module, top):
        where = getattr(m, "__file__", None)
        if not _inside(where, arm.src):
            raise FrontEndError("module %s was imported from %s, not from the %s sources %s: an "
                                "installed copy or another directory shadows it; rename the "
                                "module or uninstall the copy"
                                % (m.__name__, where or "a namespace package", arm.variant,
                                   arm.src))
    entry = getattr(module, spec["entry"], None)
    if not callable(entry):
        raise FrontEndError("module %s (%s) has no function '%s': define it, taking a shape's "
                            "parameters and returning an object with run() and verify(), or name "
                            "another in abharness.json (\"entry\")"
                            % (spec["module"], module.__file__, spec["entry"]))
    return entry


def check_sources_clean(src):
    """No bytecode cache may appear in the variant's sources: its digest is its identity."""
    for root, dirs, _ in os.walk(src):
        if "__pycache__" in dirs:
            raise FrontEndError("%s appeared in the variant's sources: bytecode caches must "
                                "never be written there (the front end runs with -B)"
                                % os.path.join(root, "__pycache__"))


def _amount(obj, name):
    """flops / bytes: an attribute or a method returning a number >= 0; 0 when absent."""
    value = getattr(obj, name, 0)
    if callable(value):
        value = value()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ProtocolError("%s is %r: give a number >= 0 (per iteration), or leave it out"
                            % (name, value))
    return float(value)


class Problem:
    """The user's problem object, checked once when it is made."""

    def __init__(self, obj, origin):
        self.obj, self.origin = obj, origin
        for method in ("run", "verify"):
            if not callable(getattr(obj, method, None)):
                raise ProtocolError("%s returned %s, which has no %s() method: a problem needs "
                                    "run() (enqueue one iteration) and verify() (check the last "
                                    "output)" % (origin, type(obj).__name__, method))
        self.flops = _amount(obj, "flops")
        self.bytes = _amount(obj, "bytes")
        self.tactics = self._tactics(origin)
        self.set_bytes = self._buffer_sets(origin)
        self.capabilities = ((protocol.ABH_CAP_CAPTURABLE if self._capturable() else 0) |
                             (protocol.ABH_CAP_BUFFER_SETS if self.set_bytes else 0))

    def _capturable(self):
        value = getattr(self.obj, "capturable", False)
        if callable(value):
            value = value()
        if not isinstance(value, bool):
            raise ProtocolError("capturable is %r: set it to True when run() can be captured into "
                                "a CUDA graph (docs/python.md), or leave it out" % (value,))
        return value

    def _buffer_sets(self, origin):
        """buffer_set_bytes with make_buffer_sets(count) and use_buffer_set(i): all three or none.
        The bytes of one set, or 0 without sets."""
        parts = ("buffer_set_bytes", "make_buffer_sets", "use_buffer_set")
        present = [p for p in parts if getattr(self.obj, p, None) is not None]
        if not present:
            return 0.0
        if len(present) != len(parts):
            raise ProtocolError("%s has %s but not %s: buffer sets need buffer_set_bytes, "
                                "make_buffer_sets(count) and use_buffer_set(i) (docs/python.md)"
                                % (origin, ", ".join(present),
                                   ", ".join(p for p in parts if p not in present)))
        for method in parts[1:]:
            if not callable(getattr(self.obj, method)):
                raise ProtocolError("%s.%s is not a method" % (origin, method))
        value = _amount(self.obj, "buffer_set_bytes")
        if not value > 0:
            raise ProtocolError("buffer_set_bytes is %r: give the device bytes one set of inputs "
                                "and outputs occupies (> 0)" % (value,))
        return value

    def _tactics(self, origin):
        tactics = getattr(self.obj, "tactics", None)
        if tactics is None:
            return [DEFAULT_TACTIC]
        if not callable(getattr(self.obj, "select", None)):
            raise ProtocolError("%s has tactics() but no select(key): both, or neither" % origin)
        keys = list(tactics())
        if not keys or any(not isinstance(k, str) or not k or "\0" in k or len(k) >= 1024
                           for k in keys) or len(set(keys)) != len(keys):
            raise ProtocolError("tactics() returned %r: give a non-empty list of distinct, "
                                "non-empty strings (each names one tactic fully, < 1024 "
                                "characters)" % (keys,))
        return keys

    def select(self, key):
        if key not in self.tactics:
            raise KeyError("no tactic %r here (tactics: %s)" % (key, ", ".join(self.tactics)))
        if hasattr(self.obj, "tactics"):
            self.obj.select(key)

    def verification(self):
        """(passed, max error, tolerance, checked, method) of the last output."""
        tolerance = getattr(self.obj, "tolerance", None)
        try:
            got = self.obj.verify()
        except AssertionError as e:  # includes abharness.WrongResult
            print_traceback()
            return False, float("inf"), self._tolerance(tolerance, 0.0), 0, error_reason(e)
        if _is_bool(got):
            # False is the plain way to say "wrong"; True says nothing of how far the output is
            # from its reference, and a pass must record a max error (docs/python.md).
            try:
                truth = bool(got)
            except Exception:  # a bool array of several elements has no one truth value
                raise self._refused(got, "give one bool, or the max error")
            if not truth:
                return (False, float("inf"), self._tolerance(tolerance, 0.0), 0,
                        "verify() returned False")
            raise self._refused(got, "a bool is no max error: return the max error (with a "
                                "`tolerance` attribute) or an abharness.Verification, and "
                                "return False or raise AssertionError when the output is wrong")
        fields = self._fields(got)
        err = self._number(fields["max_error"], "max error")
        if err < 0:
            raise self._refused(got, "a max error is a distance, never negative: return "
                                "max |out - ref| (relative), not a signed difference")
        tolerance = fields.get("tolerance", tolerance)
        if tolerance is None:
            raise ProtocolError("%s: verify() returned a max error (%r) but the problem has no "
                                "`tolerance`: set one, or return an abharness.Verification"
                                % (self.origin, err))
        checked = fields.get("checked", 0)
        if _is_bool(checked) or not isinstance(checked, numbers.Integral) or checked < 0:
            raise self._refused(got, "`checked` is %r: give the number of output elements "
                                "compared, an int >= 0" % (checked,))
        method = fields.get("method", "")
        if not isinstance(method, str):
            raise self._refused(got, "`method` is %r: give a str" % (method,))
        tolerance = self._tolerance(tolerance)
        return err <= tolerance, err, tolerance, int(checked), method or "verify()"

    def _refused(self, got, why):
        return ProtocolError("%s: verify() returned %s (%s): %s"
                             % (self.origin, _shown(got), type(got).__name__, why))

    def _fields(self, got):
        """The max error and the optional fields of what verify() returned, by name."""
        names = ("max_error", "tolerance", "checked", "method")
        if isinstance(got, dict):
            unknown = sorted(str(k) for k in got if k not in names)
            if "max_error" not in got or unknown:
                raise self._refused(got, "a dict needs the key max_error, and may have only %s"
                                    "%s" % (", ".join(names), (" (not %s)" % ", ".join(unknown))
                                            if unknown else ""))
            return got
        if hasattr(got, "max_error"):
            return {n: getattr(got, n) for n in names if hasattr(got, n)}
        if isinstance(got, (str, bytes)) or not hasattr(type(got), "__float__"):
            raise self._refused(got, "return the max error as a number (with a `tolerance` "
                                "attribute), an abharness.Verification or a dict with its "
                                "fields, or raise AssertionError when the output is wrong")
        return {"max_error": got}

    def _number(self, value, what):
        try:
            return abharness._as_number(value, what)
        except TypeError as e:
            raise ProtocolError("%s: verify(): %s" % (self.origin, e))

    def _tolerance(self, value, default=None):
        if value is None and default is not None:
            return default
        tolerance = self._number(value, "tolerance")
        if not tolerance >= 0:
            raise ProtocolError("%s: the tolerance is %r: give a number >= 0"
                                % (self.origin, tolerance))
        return tolerance


def _is_bool(value):
    """True for bool and for the bools of NumPy and torch (np.bool_, a 0-d bool tensor), which
    convert to 1.0 and 0.0 as silently as Python's."""
    return isinstance(value, bool) or str(getattr(value, "dtype", "")) in ("bool", "torch.bool")


def _shown(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
