"""The front end's process: its command line (the worker's own, core/model/worker_protocol.hpp),
the orchestrator it dies with, the order in which it reads the plan, imports the user's module and
loads the engine, and the exit code it ends with."""

import ctypes
import json
import os
import sys

from . import protocol
from .errors import FrontEndError, error_reason, log, print_traceback
from .frameworks import prime_triton
from .identity import interpreter_identity
from .plan import PlannedArm, keep_off_measuring_cpu
from .plugin_table import PythonPlugin
from .user_module import check_sources_clean, import_entry


def follow_parent():
    """Dies with the orchestrator, as the engine's own worker does, from the first moment: an
    orphan that finished its arm after the orchestrator was killed would write a result behind a
    resume's back."""
    parent = os.environ.get(protocol.PARENT_PID_ENV)
    if not parent:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG, SIGKILL = 1, 9
    libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    if os.getppid() != int(parent):
        raise FrontEndError("the orchestrator (pid %s) is gone" % parent)


RUN_USAGE = "%s %s SHAPE %s ARM [%s] [%s]" % (protocol.RUN_DIR_FLAG + " RUN", protocol.SHAPE_FLAG,
                                              protocol.ARM_FLAG, protocol.WARMUP_FLAG,
                                              protocol.AHEAD_FLAG)


def parse_run_args(args):
    flags = {protocol.RUN_DIR_FLAG: None, protocol.SHAPE_FLAG: None, protocol.ARM_FLAG: None}
    it = iter(args)
    for a in it:
        # --ahead (a worker started ahead, its stdin the turn socket) is the engine's to handle:
        # it waits for its turns after the user's module is imported (docs/method.md). So is
        # --warmup: the engine measures the arm and writes no result.
        if a in (protocol.AHEAD_FLAG, protocol.WARMUP_FLAG):
            continue
        if a not in flags:
            raise FrontEndError("unknown argument %r (usage: %s %s)" % (a, protocol.RUN, RUN_USAGE),
                                protocol.EXIT_USAGE)
        flags[a] = next(it, None)
    missing = [f for f, v in flags.items() if not v]
    if missing:
        raise FrontEndError("%s needs %s" % (protocol.RUN, ", ".join(missing)), protocol.EXIT_USAGE)
    return flags[protocol.RUN_DIR_FLAG], flags[protocol.SHAPE_FLAG], flags[protocol.ARM_FLAG]


def load_engine(python_dir):
    """The worker engine: beside bin/python/ in a build tree, in lib/ next to bin/ installed."""
    bindir = os.path.dirname(python_dir)
    candidates = [os.path.join(bindir, protocol.WORKER_ENGINE),
                  os.path.join(bindir, "..", "lib", protocol.WORKER_ENGINE)]
    path = next((c for c in candidates if os.path.exists(c)), candidates[0])
    try:
        return ctypes.CDLL(path, mode=os.RTLD_NOW)
    except OSError as e:
        raise FrontEndError("cannot load the worker engine: %s" % e)


def run_arm(args, script):
    python_dir = os.path.dirname(script)
    run_dir, shape, arm_name = parse_run_args(args)
    follow_parent()
    arm = PlannedArm(run_dir, shape, arm_name)
    if protocol.AHEAD_FLAG in args:
        keep_off_measuring_cpu(arm.cpus)
    identity = interpreter_identity(arm.interpreter)
    log("python %s (%s), interpreter identified" % (identity["version"], sys.executable))
    # The user's module goes first, the engine after it: torch loads its own CUDA runtime and
    # CUPTI by full path when it is imported, and the engine's dependencies of the same names
    # (libcudart.so.13, libcupti.so.13) then resolve to those copies instead of mapping second
    # ones (docs/python.md). The other order put two CUPTIs in every torch arm on the H200.
    entry = import_entry(arm, python_dir)
    check_sources_clean(arm.src)
    log("module %s imported from %s" % (arm.python["module"], arm.src))
    prime_triton()
    engine = load_engine(python_dir)
    log("engine loaded")
    origin = "%s.%s" % (arm.python["module"], arm.python["entry"])
    argv = [protocol.WORKER_EXECUTABLE, protocol.RUN] + list(args)
    return PythonPlugin(entry, arm, origin).run(engine, argv, script, identity)


def main(argv, script):
    if not sys.flags.isolated:
        raise FrontEndError("run the Python front end isolated, as abharness does: <python> %s %s "
                            "..." % (" ".join(protocol.PYTHON_FLAGS), script), protocol.EXIT_USAGE)
    if argv[:1] == [protocol.INTERPRETER]:
        print(json.dumps(interpreter_identity(), indent=1))
        return protocol.EXIT_OK
    if argv[:1] == [protocol.RUN]:
        return run_arm(argv[1:], script)
    raise FrontEndError("usage: %s %s %s | %s" % (os.path.basename(script), protocol.RUN,
                                                  RUN_USAGE, protocol.INTERPRETER),
                        protocol.EXIT_USAGE)


def run(argv, script):
    """main(), with every failure turned into the worker's error line and exit code."""
    try:
        return main(argv, script)
    except FrontEndError as e:
        sys.stderr.write(protocol.ERROR_PREFIX + str(e) + "\n")
        return e.code
    except BaseException as e:
        print_traceback()
        sys.stderr.write(protocol.ERROR_PREFIX + "the Python front end failed: " +
                         error_reason(e) + "\n")
        return protocol.EXIT_RUNTIME
