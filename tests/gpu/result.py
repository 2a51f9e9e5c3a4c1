#!/usr/bin/env python3
"""Reads one arm's result file and prints a field: median_ns, timer, kernels, tactic, throttled,
error, tol, method, telemetry, clock, cache, or json (the whole measurement block).

usage: result.py RESULT_JSON WHAT
"""
import json
import statistics
import sys


def main():
    path, what = sys.argv[1:3]
    with open(path) as f:
        r = json.load(f)
    m = r["measurement"]
    if what == "median_ns":
        print(statistics.median(m["samples_ns"]))
    elif what == "count":
        print(len(m["samples_ns"]))
    elif what == "cache":
        print(m["cache_preparation"])
    elif what == "timer":
        print(m["timer"])
    elif what == "kernels":
        print(" | ".join(m["kernel_names"]))
    elif what == "tactic":
        print(m["tactic"])
    elif what == "throttled":
        print(str(r["telemetry"]["throttled"]).lower())
    elif what == "error":
        print(r["correctness"]["max_rel_error"])
    elif what == "tol":
        print(r["correctness"]["tolerance"])
    elif what == "method":
        print(r["correctness"]["method"])
    elif what == "telemetry":
        t = r["telemetry"]
        print(json.dumps({k: t[k] for k in ("before", "after", "throttled", "note")}))
    elif what == "clock":
        c = dict(m["clock"])
        mhz = c.pop("sample_mhz")
        c["samples"] = len(m["samples_ns"])
        c["clocked"] = len(mhz)
        if mhz:
            c["mhz_min"], c["mhz_median"], c["mhz_max"] = min(mhz), statistics.median(mhz), max(mhz)
        print(json.dumps(c))
    elif what == "json":
        print(json.dumps({k: v for k, v in m.items() if k != "samples_ns"}, indent=1))
    else:
        sys.exit("result.py: unknown field " + what)


if __name__ == "__main__":
    main()
