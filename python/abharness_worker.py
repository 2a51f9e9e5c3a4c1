"""abharness's Python launcher: one arm of a Python plugin, in a process of its own.

The orchestrator starts it with the user's interpreter, isolated and without writing bytecode:

    <python> -I -B .../python/abharness_worker.py run --run-dir RUN --shape SHAPE --arm ARM
    <python> -I -B .../python/abharness_worker.py interpreter      (the plan's interpreter record)

It loads the worker engine (libabharness_worker.so, beside this directory) with ctypes, imports the
plugin's module from the variant's materialized sources, wraps the problem object that the
module's entry makes in a plugin table of C callbacks (include/abharness/plugin.h), and hands the
table to the engine's abh_worker_main (include/abharness/worker.h). Timers, cold L2, clock stamps,
the stopping rule, verification and the result file are then the engine's, exactly as for a C++
plugin. Only the standard library is used and nothing of the interpreter's C ABI, so any CPython
>= 3.9 runs it without rebuilding anything. docs/python.md describes the protocol.
"""

import sys

if sys.version_info < (3, 9):
    sys.stderr.write("abharness-worker: error: Python %d.%d is too old: abharness runs Python "
                     "plugins under CPython >= 3.9 (give another interpreter with --python)\n"
                     % sys.version_info[:2])
    sys.exit(5)

sys.dont_write_bytecode = True  # nothing may be written into the variant's sources (-B too)

import ctypes  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

ENGINE = "libabharness_worker.so"
ERROR_PREFIX = "abharness-worker: error: "
# Exit codes of model/worker_protocol.hpp.
EXIT_USAGE, EXIT_RUNTIME, EXIT_WRONG, EXIT_UNSUPPORTED = 2, 3, 4, 5
# include/abharness/plugin.h
ABI_VERSION = 1
ABH_OK, ABH_ERR_INVALID_PARAMS, ABH_ERR_UNSUPPORTED, ABH_ERR_RUNTIME = 0, 1, 2, 3
ABH_ERR_WRONG_RESULT = 4
DEVICE = {"cpu": 0, "cuda": 1}
# include/abharness/worker.h
FRONT_END_VERSION = 1
DEFAULT_TACTIC = "default"


class ProtocolError(Exception):
    """The user's module or problem does not follow the protocol (docs/python.md): the message
    names what is missing and the fix; no traceback, the launcher found it, not user code."""


class LaunchError(Exception):
    """A failure of the launcher itself: ends the process with an error line and `code`."""

    def __init__(self, message, code=EXIT_RUNTIME):
        super().__init__(message)
        self.code = code


def _process_age():
    """Seconds since the kernel started this process (as the engine counts an arm's start-up)."""
    with open("/proc/self/stat") as f:
        stat = f.read()
    start_ticks = int(stat[stat.rindex(")") + 2:].split()[19])
    return time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")


def log(message):
    """A phase line of the arm's log, stamped like the engine's."""
    sys.stdout.write("[%.3f s] %s\n" % (_process_age(), message))
    sys.stdout.flush()


def _error_reason(exc):
    """One line for the failure record: the exception's type and first line."""
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (": " + text[0] if text else "")


def _print_traceback():
    import traceback

    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()


# --- the interpreter's identity (model/interpreter.hpp) -------------------------------------------


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _site_fingerprint(paths):
    """A cheap fingerprint of the import path: each directory's mtime and the names of the
    distribution metadata in it. Installing, removing or upgrading a distribution renames or
    adds such an entry, which also changes the directory's mtime."""
    h = hashlib.sha256()
    for p in paths:
        h.update(("\0path\0" + p).encode("utf-8", "surrogateescape"))
        try:
            st = os.stat(p)
        except OSError:
            h.update(b"\0absent")
            continue
        h.update(("\0%d\0%d" % (st.st_mtime_ns, st.st_size)).encode())
        if os.path.isdir(p):
            names = sorted(n for n in os.listdir(p)
                           if n.endswith((".dist-info", ".egg-info", ".egg-link", ".pth")))
            h.update("\0".join(names).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _distributions():
    """Sorted "name==version" of every distribution visible to this interpreter, names
    normalized as pip compares them."""
    import importlib.metadata
    import re

    found = set()
    for dist in importlib.metadata.distributions():
        name = dist.metadata.get("Name") or "UNKNOWN"
        found.add(re.sub(r"[-_.]+", "-", name).lower() + "==" + (dist.version or "UNKNOWN"))
    return sorted(found)


def _digest_list(items):
    return hashlib.sha256("\n".join(items).encode()).hexdigest()


def interpreter_identity(planned=None):
    """This interpreter as the plan and each result record it. With `planned` (the plan's
    record), the distributions are listed again only when the import path's fingerprint moved
    since the plan; otherwise the plan's digest stands (see docs/python.md)."""
    real = os.path.realpath(sys.executable)
    identity = {
        "requested": planned["requested"] if planned else "",
        "executable": sys.executable,
        "real_path": real,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "sha256": _sha256_file(real),
        "site_sha256": _site_fingerprint(sys.path),
    }
    if planned and planned["site_sha256"] == identity["site_sha256"]:
        identity["distributions_sha256"] = planned["distributions_sha256"]
    else:
        dists = _distributions()
        identity["distributions_sha256"] = _digest_list(dists)
        if not planned:
            identity["distributions"] = dists
    return identity


# --- the plan ------------------------------------------------------------------------------------


class PlannedArm:
    """The plan's entries for one arm: the variant's sources and its Python plugin."""

    def __init__(self, run_dir, shape, arm):
        path = os.path.join(run_dir, "plan.json")
        try:
            with open(path) as f:
                plan = json.load(f)
        except (OSError, ValueError) as e:
            raise LaunchError("cannot read %s: %s" % (path, e), EXIT_USAGE)
        task = next((t for t in plan.get("tasks", []) if t["shape"] == shape and t["arm"] == arm),
                    None)
        if task is None:
            raise LaunchError("plan %s has no arm %s/%s" % (plan.get("run_id"), shape, arm),
                              EXIT_USAGE)
        variant = next(v for v in plan["variants"] if v["name"] == task["variant"])
        self.python = variant["recipe"].get("python")
        self.interpreter = plan.get("python")
        if self.python is None or self.interpreter is None:
            raise LaunchError("the %s plugin of %s/%s is not a Python plugin: its arms run under "
                              "abharness-worker" % (variant["name"], shape, arm), EXIT_USAGE)
        self.variant = variant["name"]
        self.src = os.path.realpath(os.path.join(run_dir, variant["plugin"]))
        # The arm's CPUs: the plan's, or those the lane chose on its node (a Slurm lane).
        self.cpus = task.get("cpus") or parse_cpu_list(os.environ.get("ABH_ARM_CPUS", ""))


def parse_cpu_list(text):
    """CPUs of a list such as 4-7,12 (the kernel's cpulist format); [] for an empty one."""
    cpus = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def keep_off_measuring_cpu(cpus):
    """A worker started ahead imports the user's module while the arm before it measures: it keeps
    off the CPU that arm's measuring thread is pinned to (the first of the arm's CPUs), as the
    engine does for its own start-up, where the arm has others."""
    if len(cpus) > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus[1:])


# --- the user's module ---------------------------------------------------------------------------


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
        _print_traceback()
        raise LaunchError("cannot import module %s from the %s sources %s: %s"
                          % (spec["module"], arm.variant, arm.src, _error_reason(e)))
    top = sys.modules[spec["module"].split(".")[0]]
    for m in (module, top):
        where = getattr(m, "__file__", None)
        if not _inside(where, arm.src):
            raise LaunchError("module %s was imported from %s, not from the %s sources %s: an "
                              "installed copy or another directory shadows it; rename the "
                              "module or uninstall the copy"
                              % (m.__name__, where or "a namespace package", arm.variant, arm.src))
    entry = getattr(module, spec["entry"], None)
    if not callable(entry):
        raise LaunchError("module %s (%s) has no function '%s': define it, taking a shape's "
                          "parameters and returning an object with run() and verify(), or name "
                          "another in abharness.json (\"entry\")"
                          % (spec["module"], module.__file__, spec["entry"]))
    return entry


def check_sources_clean(src):
    """No bytecode cache may appear in the variant's sources: its digest is its identity."""
    for root, dirs, _ in os.walk(src):
        if "__pycache__" in dirs:
            raise LaunchError("%s appeared in the variant's sources: bytecode caches must "
                              "never be written there (the launcher runs with -B)"
                              % os.path.join(root, "__pycache__"))


# --- the plugin table (include/abharness/plugin.h) -----------------------------------------------


class VerifyResult(ctypes.Structure):
    _fields_ = [("max_rel_error", ctypes.c_double), ("tolerance", ctypes.c_double),
                ("checked", ctypes.c_uint64), ("method", ctypes.c_char * 128)]


_ERR = (ctypes.c_void_p, ctypes.c_size_t)  # char* err, size_t err_len
CREATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), *_ERR)
ENQUEUE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, *_ERR)
VERIFY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(VerifyResult), *_ERR)
AMOUNT = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)
TACTIC_COUNT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
TACTIC_KEY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                              ctypes.c_size_t)
SELECT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, *_ERR)
LIBRARIES = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
SESSION_OPENED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int)


class PluginTable(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("device", ctypes.c_int), ("create", CREATE), ("enqueue", ENQUEUE),
                ("verify", VERIFY), ("flops", AMOUNT), ("min_bytes", AMOUNT),
                ("tactic_count", TACTIC_COUNT), ("tactic_key", TACTIC_KEY),
                ("select_tactic", SELECT), ("library_versions", LIBRARIES),
                ("destroy", DESTROY)]


class FrontEnd(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("kind", ctypes.c_char_p),
                ("plugin", ctypes.POINTER(PluginTable)), ("launcher_path", ctypes.c_char_p),
                ("identity_json", ctypes.c_char_p), ("session_opened", SESSION_OPENED)]


def _say(buf, length, text):
    """Copies `text` into a C buffer of the ABI, truncated and NUL-terminated."""
    if buf and length:
        data = text.encode("utf-8", "replace")[:length - 1]
        ctypes.memmove(buf, data, len(data))
        ctypes.memset(buf + len(data), 0, 1)


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
        self.obj = obj
        for method in ("run", "verify"):
            if not callable(getattr(obj, method, None)):
                raise ProtocolError("%s returned %s, which has no %s() method: a problem needs run() "
                                "(enqueue one iteration) and verify() (check the last output)"
                                % (origin, type(obj).__name__, method))
        self.flops = _amount(obj, "flops")
        self.bytes = _amount(obj, "bytes")
        self.tactics = self._tactics(origin)

    def _tactics(self, origin):
        tactics = getattr(self.obj, "tactics", None)
        if tactics is None:
            return [DEFAULT_TACTIC]
        if not callable(getattr(self.obj, "select", None)):
            raise ProtocolError("%s has tactics() but no select(key): both, or neither" % origin)
        keys = list(tactics())
        if not keys or any(not isinstance(k, str) or not k or "\0" in k or len(k) >= 1024
                           for k in keys) or len(set(keys)) != len(keys):
            raise ProtocolError("tactics() returned %r: give a non-empty list of distinct, non-empty "
                            "strings (each names one tactic fully, < 1024 characters)" % (keys,))
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
            _print_traceback()
            return False, float("inf"), float(tolerance or 0), 0, _error_reason(e)
        if got is None:
            raise ProtocolError("verify() returned None: return the max error (with a `tolerance` "
                            "attribute), or an abharness.Verification, or raise AssertionError "
                            "on a wrong result")
        if isinstance(got, dict):
            got = type("V", (), got)
        if hasattr(got, "max_error"):
            err, tolerance = got.max_error, getattr(got, "tolerance", tolerance)
            checked, method = getattr(got, "checked", 0), getattr(got, "method", "")
        else:
            err, checked, method = got, 0, ""
        if tolerance is None:
            raise ProtocolError("verify() returned a max error (%r) but the problem has no "
                            "`tolerance`: set one, or return an abharness.Verification" % (err,))
        err, tolerance = float(err), float(tolerance)
        return err <= tolerance, err, tolerance, int(checked), str(method or "verify()")


class Launcher:
    """The plugin table over one Python problem at a time, and the engine it is handed to."""

    def __init__(self, entry, arm, origin):
        self.entry, self.arm, self.origin = entry, arm, origin
        self.problems = {}  # handle -> Problem
        self.made = 0
        self.stream = None
        self.bound = set()
        self.failure = None
        device = arm.python["device"]
        self.table = PluginTable(
            ABI_VERSION, ("python:" + arm.python["module"]).encode(), DEVICE[device],
            CREATE(self._create), ENQUEUE(self._enqueue), VERIFY(self._verify),
            AMOUNT(lambda p: self.problems[p].flops), AMOUNT(lambda p: self.problems[p].bytes),
            TACTIC_COUNT(lambda p: len(self.problems[p].tactics)), TACTIC_KEY(self._tactic_key),
            SELECT(self._select), LIBRARIES(self._libraries), DESTROY(self._destroy))

    # Every callback catches everything: an exception that escaped into ctypes would be printed
    # and swallowed, and the engine would read a status of 0 (success).
    def _guarded(self, what, err, length, body, status=ABH_ERR_RUNTIME):
        try:
            return body()
        except BaseException as e:
            if isinstance(e, ProtocolError):
                _say(err, length, str(e))
                return status
            _print_traceback()
            _say(err, length, "%s raised %s" % (what, _error_reason(e)))
            import abharness

            return ABH_ERR_UNSUPPORTED if isinstance(e, abharness.Unsupported) else status

    def _session_opened(self, stream, device):
        try:
            self.stream = stream
            import abharness

            abharness._set_stream(stream or 0)
            self._bind_stream()
        except BaseException as e:
            _print_traceback()
            self.failure = "binding the worker's stream raised " + _error_reason(e)

    def _bind_stream(self):
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

    def _log_cuda_libraries(self):
        """Names the CUDA libraries mapped into the process: torch and triton bring their own
        runtime and CUPTI, and two copies of CUPTI in one process is the thing to look for when
        kernel times look wrong (docs/python.md)."""
        with open("/proc/self/maps") as f:
            paths = sorted({line.split(None, 5)[5].strip() for line in f
                            if line.count(" ") >= 5 and "/lib" in line
                            and any(n in line for n in ("libcudart", "libcupti", "libcublas"))})
        cupti = {os.path.realpath(p) for p in paths if "libcupti" in p}
        log("CUDA libraries mapped: %s%s" % (", ".join(paths) or "none",
                                             "; WARNING: %d copies of CUPTI" % len(cupti)
                                             if len(cupti) > 1 else ""))

    def _synchronize_frameworks(self):
        """Waits for work make_problem may have queued on other streams (a framework imported
        inside it, before its stream was bound)."""
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            cupy.cuda.Device().synchronize()

    def _create(self, params_json, out, err, length):
        def body():
            if self.failure:
                raise RuntimeError(self.failure)
            params = json.loads(params_json.decode())
            obj = self.entry(params)
            problem = Problem(obj, self.origin + "(" + json.dumps(params, sort_keys=True) + ")")
            if self.stream:
                self._bind_stream()
                self._synchronize_frameworks()
                if not self.made:
                    self._log_cuda_libraries()
            self.made += 1
            handle = self.made
            self.problems[handle] = problem
            out[0] = handle
            return ABH_OK

        return self._guarded(self.origin + "(params)", err, length, body)

    def _enqueue(self, handle, stream, err, length):
        def body():
            if stream and len(self.bound) < 2:
                self._bind_stream()
            self.problems[handle].obj.run()
            return ABH_OK

        return self._guarded("run()", err, length, body)

    def _verify(self, handle, out, err, length):
        def body():
            passed, max_err, tolerance, checked, method = self.problems[handle].verification()
            out[0].max_rel_error = max_err
            out[0].tolerance = tolerance
            out[0].checked = checked
            out[0].method = method.encode("utf-8", "replace")[:127]
            return ABH_OK if passed else ABH_ERR_WRONG_RESULT

        return self._guarded("verify()", err, length, body)

    def _tactic_key(self, handle, index, buf, length):
        tactics = self.problems[handle].tactics
        if not 0 <= index < len(tactics):
            return ABH_ERR_INVALID_PARAMS
        _say(buf, length, tactics[index])
        return ABH_OK

    def _select(self, handle, key, err, length):
        def body():
            self.problems[handle].select(key.decode())
            return ABH_OK

        return self._guarded("select(%r)" % key.decode(errors="replace"), err, length, body,
                             ABH_ERR_INVALID_PARAMS)

    def _libraries(self, buf, length):
        _say(buf, length, "{}")
        return ABH_OK

    def _destroy(self, handle):
        self.problems.pop(handle, None)

    def run(self, engine, argv, identity):
        self.session_opened = SESSION_OPENED(self._session_opened)  # kept alive while it runs
        front_end = FrontEnd(FRONT_END_VERSION, b"python", ctypes.pointer(self.table),
                             os.path.realpath(__file__).encode(), json.dumps(identity).encode(),
                             self.session_opened)
        args = (ctypes.c_char_p * (len(argv) + 1))(*[a.encode() for a in argv], None)
        engine.abh_worker_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                           ctypes.POINTER(FrontEnd)]
        engine.abh_worker_main.restype = ctypes.c_int
        return engine.abh_worker_main(len(argv), args, ctypes.byref(front_end))


# --- the process ---------------------------------------------------------------------------------


def follow_parent():
    """Dies with the orchestrator, as the engine's own worker does, from the first moment: an
    orphan that finished its arm after the orchestrator was killed would write a result behind a
    resume's back."""
    parent = os.environ.get("ABH_PARENT_PID")
    if not parent:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG, SIGKILL = 1, 9
    libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    if os.getppid() != int(parent):
        raise LaunchError("the orchestrator (pid %s) is gone" % parent)


def parse_run_args(args):
    flags = {"--run-dir": None, "--shape": None, "--arm": None}
    it = iter(args)
    for a in it:
        # --ahead (a worker started ahead, its stdin the turn socket) is the engine's to handle:
        # it waits for its turns after the user's module is imported (docs/method.md).
        if a == "--ahead":
            continue
        if a not in flags:
            raise LaunchError("unknown argument %r (usage: run --run-dir RUN --shape SHAPE "
                              "--arm ARM [--ahead])" % a, EXIT_USAGE)
        flags[a] = next(it, None)
    missing = [f for f, v in flags.items() if not v]
    if missing:
        raise LaunchError("run needs %s" % ", ".join(missing), EXIT_USAGE)
    return flags["--run-dir"], flags["--shape"], flags["--arm"]


def load_engine(here):
    """The worker engine: beside bin/python/ in a build tree, in lib/ next to bin/ installed."""
    bindir = os.path.dirname(here)
    candidates = [os.path.join(bindir, ENGINE), os.path.join(bindir, "..", "lib", ENGINE)]
    path = next((c for c in candidates if os.path.exists(c)), candidates[0])
    try:
        return ctypes.CDLL(path, mode=os.RTLD_NOW)
    except OSError as e:
        raise LaunchError("cannot load the worker engine: %s" % e)


def run_arm(args):
    here = os.path.dirname(os.path.realpath(__file__))
    run_dir, shape, arm_name = parse_run_args(args)
    follow_parent()
    arm = PlannedArm(run_dir, shape, arm_name)
    if "--ahead" in args:
        keep_off_measuring_cpu(arm.cpus)
    identity = interpreter_identity(arm.interpreter)
    log("python %s (%s), interpreter identified" % (identity["version"], sys.executable))
    # The user's module goes first, the engine after it: torch loads its own CUDA runtime and
    # CUPTI by full path when it is imported, and the engine's dependencies of the same names
    # (libcudart.so.13, libcupti.so.13) then resolve to those copies instead of mapping second
    # ones (docs/python.md). The other order put two CUPTIs in every torch arm on the H200.
    entry = import_entry(arm, here)
    check_sources_clean(arm.src)
    log("module %s imported from %s" % (arm.python["module"], arm.src))
    engine = load_engine(here)
    log("engine loaded")
    origin = "%s.%s" % (arm.python["module"], arm.python["entry"])
    launcher = Launcher(entry, arm, origin)
    return launcher.run(engine, ["abharness-worker"] + ["run"] + list(args), identity)


def main(argv):
    if not sys.flags.isolated:
        raise LaunchError("run the launcher isolated, as abharness does: <python> -I -B %s ..."
                          % __file__, EXIT_USAGE)
    if argv[:1] == ["interpreter"]:
        print(json.dumps(interpreter_identity(), indent=1))
        return 0
    if argv[:1] == ["run"]:
        return run_arm(argv[1:])
    raise LaunchError("usage: abharness_worker.py run --run-dir RUN --shape SHAPE --arm ARM | "
                      "interpreter", EXIT_USAGE)


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except LaunchError as e:
        sys.stderr.write(ERROR_PREFIX + str(e) + "\n")
        code = e.code
    except BaseException as e:
        _print_traceback()
        sys.stderr.write(ERROR_PREFIX + "the launcher failed: " + _error_reason(e) + "\n")
        code = EXIT_RUNTIME
    sys.stdout.flush()
    sys.stderr.flush()
    # No interpreter teardown: the result is written, and a framework's exit handlers (CUDA
    # caches, threads) must not turn a measured arm into a crashed one.
    os._exit(code)
