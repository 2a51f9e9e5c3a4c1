#!/usr/bin/env python3
"""How far apart two processes of one build read, shape by shape, over finished A/A runs.

The interval of a shape that ran one block rests on a between-arm spread it borrows from the
run's other shapes (docs/statistics.md, "Variation between arms"). That pool is right for a shape
only if the shapes vary alike. This bench reads the reports of A/A runs (for example the sweeps
of bench/aa_coverage.sh) and prints, per shape:

  - pairs: the runs in which it was not found in conflict with the others (with --all: every run);
  - sd: the spread between its first two baseline arms, A1 and A2, at one clock: the root mean
    square of log(A2 / A1) over those runs, divided by sqrt(2) (one process's standard deviation;
    it holds the arms' own sampling error too);
  - MHz: the range of the clock the shape was compared at;
  - held: in how many of the runs its interval held 1.

A shape whose sd is well above the others' borrows too narrow a spread, and its intervals miss.

usage: bench/arm_spread_by_shape.py [--all] RUN_DIR [RUN_DIR ...]
"""
import argparse
import collections
import json
import math
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true",
                    help="count the runs in which the shape was found in conflict too")
    ap.add_argument("runs", nargs="+", help="run directories holding a report.json")
    args = ap.parse_args()

    pairs = collections.defaultdict(list)  # shape -> [(log A2/A1, mhz, held)]
    for run in args.runs:
        path = os.path.join(run, "report.json")
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"arm_spread_by_shape: {path}: {e} (pass run directories of finished runs)")
        for s in report["shapes"]:
            if not args.all and (s.get("arm_variation") or {}).get("prior_conflict"):
                continue
            arms = {a["arm"]: a for a in s["arms"] if a.get("ok")}
            if "A1" not in arms or "A2" not in arms or not s.get("ci"):
                continue
            d = math.log(arms["A2"]["median_ns"] / arms["A1"]["median_ns"])
            held = s["ci"]["lo"] <= 1 <= s["ci"]["hi"]
            pairs[s["shape"]].append((d, s.get("reference_mhz") or 0.0, held))

    if not pairs:
        sys.exit("arm_spread_by_shape: no shape with both A1 and A2 in these runs")
    width = max(len(k) for k in pairs)
    print(f"{'shape':<{width}}  pairs      sd        MHz        held")
    for shape in sorted(pairs, key=lambda k: -rms(pairs[k])):
        v = pairs[shape]
        mhz = [m for _, m, _ in v if m]
        clock = f"{min(mhz):.0f}-{max(mhz):.0f}" if mhz else "-"
        print(f"{shape:<{width}}  {len(v):5d}  {100 * rms(v):6.3f} %  {clock:>9}  "
              f"{sum(h for _, _, h in v):3d}/{len(v)}")


def rms(v):
    return math.sqrt(sum(d * d for d, _, _ in v) / len(v) / 2)


if __name__ == "__main__":
    main()
