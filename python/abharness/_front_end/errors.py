"""The front end's failures, and its log lines in the arm's log."""

import os
import sys
import time

from . import protocol


class ProtocolError(Exception):
    """The user's module or problem does not follow the protocol (docs/python.md): the message
    names what is missing and the fix; no traceback, the front end found it, not user code."""


class FrontEndError(Exception):
    """A failure of the front end itself: ends the process with an error line and `code`."""

    def __init__(self, message, code=protocol.EXIT_RUNTIME):
        super().__init__(message)
        self.code = code


def error_reason(exc):
    """One line for the failure record: the exception's type and first line."""
    text = str(exc).strip().splitlines()
    return type(exc).__name__ + (": " + text[0] if text else "")


def print_traceback():
    import traceback

    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()


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
