"""The interpreter's identity (core/model/interpreter.hpp): what the plan records of the
interpreter that runs the Python plugins, and what each result records of the one that ran it."""

import hashlib
import os
import sys


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
