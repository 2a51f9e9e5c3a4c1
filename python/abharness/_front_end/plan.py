"""The arm as the plan says it (core/model/plan.hpp): the variant's sources, its Python plugin, the
interpreter it was planned with and the CPUs it runs on.

The front end reads only these few entries, before the user's module is imported and the engine
loaded; the engine then reads and checks the whole plan (its digest, every field) as for a C++
plugin. A plan of another schema version is refused here already, with the engine's words.
"""

import json
import os

from . import protocol
from .errors import FrontEndError


def _json_type(value):
    """How the C++ loader names a JSON value's type in its messages (core/system/json_io.cpp)."""
    if isinstance(value, bool):
        return "boolean " + json.dumps(value)
    if isinstance(value, int):
        return "integer %d" % value
    if isinstance(value, float):
        return "number " + json.dumps(value)
    text = json.dumps(value)
    if len(text) > 40:
        text = text[:37] + "..."
    names = {str: "string", list: "array", dict: "object", type(None): "null"}
    return names.get(type(value), "value") + " " + text


def check_schema_version(plan, where):
    """Refuses a plan of another schema version as the C++ loader does, in its words."""
    if not isinstance(plan, dict):
        raise FrontEndError("%s: expected a JSON object, found %s" % (where, _json_type(plan)),
                            protocol.EXIT_USAGE)
    if "schema_version" not in plan:
        raise FrontEndError("%s: missing field 'schema_version'" % where, protocol.EXIT_USAGE)
    found = plan["schema_version"]
    if isinstance(found, bool) or not isinstance(found, int):
        raise FrontEndError("%s: field 'schema_version': expected an integer, found %s"
                            % (where, _json_type(found)), protocol.EXIT_USAGE)
    if not protocol.PLAN_SCHEMA_OLDEST <= found <= protocol.PLAN_SCHEMA_VERSION:
        raise FrontEndError("%s: field 'schema_version': found %d, this abharness reads plan "
                            "schema %d to %d: %s" % (where, found, protocol.PLAN_SCHEMA_OLDEST,
                                                     protocol.PLAN_SCHEMA_VERSION,
                                                     protocol.PLAN_SCHEMA_FIX),
                            protocol.EXIT_USAGE)


def read_plan(run_dir):
    path = os.path.join(run_dir, protocol.PLAN_FILE)
    try:
        with open(path) as f:
            plan = json.load(f)
    except (OSError, ValueError) as e:
        raise FrontEndError("cannot read %s: %s" % (path, e), protocol.EXIT_USAGE)
    check_schema_version(plan, path)
    return plan


class PlannedArm:
    """The plan's entries for one arm: the variant's sources and its Python plugin."""

    def __init__(self, run_dir, shape, arm):
        plan = read_plan(run_dir)
        task = next((t for t in plan.get("tasks", []) if t["shape"] == shape and t["arm"] == arm),
                    None)
        if task is None:
            raise FrontEndError("plan %s has no arm %s/%s" % (plan.get("run_id"), shape, arm),
                                protocol.EXIT_USAGE)
        variant = next(v for v in plan["variants"] if v["name"] == task["variant"])
        self.python = variant["recipe"].get("python")
        self.interpreter = plan.get("python")
        if self.python is None or self.interpreter is None:
            raise FrontEndError("the %s plugin of %s/%s is not a Python plugin: its arms run under "
                                "abharness-worker" % (variant["name"], shape, arm),
                                protocol.EXIT_USAGE)
        self.variant = variant["name"]
        self.src = os.path.realpath(os.path.join(run_dir, variant["plugin"]))
        # The arm's CPUs: the plan's, or those the lane chose on its node (a Slurm lane).
        chosen = os.environ.get(protocol.ARM_CPUS_ENV, "")
        self.cpus = task.get("cpus") or (parse_cpu_list(chosen, protocol.ARM_CPUS_ENV)
                                         if chosen else [])


_DIGITS = frozenset("0123456789")


def _cpu_number(s, text, what):
    if not s or len(s) > 6 or not set(s) <= _DIGITS:
        raise FrontEndError("%s '%s': '%s' is not a CPU number; write CPUs as a list such as 0-3,8"
                            % (what, text, s), protocol.EXIT_USAGE)
    n = int(s)
    if n >= protocol.CPU_SETSIZE:
        raise FrontEndError("%s '%s': CPU %s is beyond the %d CPUs this build can address"
                            % (what, text, s, protocol.CPU_SETSIZE), protocol.EXIT_USAGE)
    return n


def parse_cpu_list(text, what):
    """The CPUs of a list such as 4-7,12 (the kernel's cpulist format), sorted, without
    duplicates: the grammar and the messages of parse_cpu_list in core/system/cpu_set.cpp, which
    the engine reads the same variable with (a unit test runs both on the same lists)."""
    items = text.rstrip(" \t\n\v\f\r").split(",")
    if items[-1] == "":  # a trailing comma ends the list, as std::getline reads it
        items.pop()
    cpus = set()
    for item in items:
        lo, dash, hi = item.partition("-")
        if not dash:
            cpus.add(_cpu_number(item, text, what))
            continue
        first, last = _cpu_number(lo, text, what), _cpu_number(hi, text, what)
        if last < first:
            raise FrontEndError("%s '%s': range %s runs backwards" % (what, text, item),
                                protocol.EXIT_USAGE)
        cpus.update(range(first, last + 1))
    if not cpus:
        raise FrontEndError("%s '%s' names no CPU: write e.g. 0-3,8" % (what, text),
                            protocol.EXIT_USAGE)
    return sorted(cpus)


def keep_off_measuring_cpu(cpus):
    """A worker started ahead imports the user's module while the arm before it measures: it keeps
    off the CPU that arm's measuring thread is pinned to (the first of the arm's CPUs), as the
    engine does for its own start-up, where the arm has others."""
    if len(cpus) > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus[1:])
