"""abharness's Python front end: one arm of a Python plugin, in a process of its own.

The orchestrator starts it with the user's interpreter, isolated and without writing bytecode:

    <python> -I -B .../python/abharness_front_end.py run --run-dir RUN --shape SHAPE --arm ARM
    <python> -I -B .../python/abharness_front_end.py interpreter   (the plan's interpreter record)

This script checks the interpreter and starts the front end, which lives beside it in the abharness
package (abharness/_front_end/): it reads the arm from the plan, loads the worker engine
(libabharness_worker.so) with ctypes, imports the plugin's module from the variant's materialized
sources, wraps the problem object that the module's entry makes in a plugin table of C callbacks
(include/abharness/plugin.h), and hands the table to the engine's abh_worker_main
(include/abharness/worker.h). Timers, cold L2, clock stamps, the stopping rule, verification and
the result file are then the engine's, exactly as for a C++ plugin. Only the standard library is
used and nothing of the interpreter's C ABI, so any CPython >= 3.9 runs it without rebuilding
anything. docs/python.md describes the protocol.
"""

import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))

if sys.version_info < (3, 9):
    # The front end's constants are plain assignments, readable by any Python 3; its modules are
    # not, so nothing else of it is imported here.
    import runpy

    protocol = runpy.run_path(os.path.join(HERE, "abharness", "_front_end", "protocol.py"))
    sys.stderr.write("%sPython %d.%d is too old: abharness runs Python plugins under CPython "
                     ">= 3.9 (give another interpreter with --python)\n"
                     % ((protocol["ERROR_PREFIX"],) + tuple(sys.version_info[:2])))
    sys.exit(protocol["EXIT_UNSUPPORTED"])

sys.dont_write_bytecode = True  # nothing may be written into the variant's sources (-B too)


def _front_end():
    """The front end, imported from the package beside this script. -I keeps this directory off
    the import path, and it goes off again at once: the interpreter's identity hashes the import
    path as -I made it, and the user's module gets the directory (for `import abharness`) only
    when it is imported itself."""
    sys.path.insert(0, HERE)
    try:
        from abharness._front_end import main
    finally:
        sys.path.remove(HERE)
    return main


if __name__ == "__main__":
    code = _front_end().run(sys.argv[1:], os.path.realpath(__file__))
    sys.stdout.flush()
    sys.stderr.flush()
    # No interpreter teardown: the result is written, and a framework's exit handlers (CUDA
    # caches, threads) must not turn a measured arm into a crashed one. The engine may also have
    # destroyed the CUDA context already, to give the next arm its turn sooner: nothing of the
    # framework may run after it.
    os._exit(code)
