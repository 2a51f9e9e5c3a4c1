#!/usr/bin/env python3
"""Edits an abharness JSON file as a forger would, for the tests that check what refuses it.

  json_edit.py FILE PYTHON [redigest]

runs PYTHON on the parsed file as `j` (json is imported) and writes it back; with `redigest`,
payload_sha256 is recomputed over the edited payload the way the harness does (sorted keys, no
whitespace), so that the rule under test is what refuses rather than the digest. Numbers the edit
leaves alone keep the text the harness wrote: its shortest-form printing differs from Python's for
about 1 double in 2,500 (0.39905357921110157 vs 0.3990535792111016), which made a recomputed
digest wrong now and then. tests/lib.sh's edit_json runs this; bench/arm_spread_verdicts.py
imports it.
"""
import hashlib
import json
import sys


class Num(float):
    """A number as the file spells it."""

    def __new__(cls, text):
        n = super().__new__(cls, text)
        n.text = text
        return n


def dump(v, sep, indent="", step=""):
    """The harness's canonical form (sorted keys, no whitespace) when step is empty; the file's
    layout (keys in order, indented by step) otherwise."""
    nl = "\n" + indent + step if step else ""
    end = "\n" + indent if step else ""
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = [json.dumps(k, ensure_ascii=False) + sep[1] + dump(v[k], sep, indent + step, step)
                 for k in (sorted(v) if not step else v)]
        return "{" + nl + (sep[0] + nl).join(items) + end + "}"
    if isinstance(v, list):
        if not v:
            return "[]"
        return "[" + nl + (sep[0] + nl).join(dump(x, sep, indent + step, step) for x in v) + end + "]"
    if isinstance(v, Num):
        return v.text
    return json.dumps(v, ensure_ascii=False)


def load(path):
    return json.load(open(path), parse_float=Num)


def redigest(j):
    payload = {k: v for k, v in j.items() if k != "payload_sha256"}
    j["payload_sha256"] = hashlib.sha256(dump(payload, (",", ":")).encode()).hexdigest()


def write(path, j):
    open(path, "w").write(dump(j, (",", ": "), "", "  ") + "\n")


def main(argv):
    path, code = argv[1], argv[2]
    scope = {"j": load(path), "json": json, "Num": Num, "path": path}
    exec(code, scope)
    j = scope["j"]
    if len(argv) > 3 and argv[3] == "redigest":
        redigest(j)
    write(path, j)


if __name__ == "__main__":
    main(sys.argv)
