#!/usr/bin/env python3
"""Replays stopping rules on the samples of long arms, offline.

An A/A sweep run with arms much longer than any rule would take (e.g. `--min-time 0.5`) holds, in
each arm's result, every sample in the order it was taken. A rule that would have stopped the arm
after its first n samples would have reported the median of those n: so each rule's drift
(A2 / A1 - 1, at one clock, as the report computes it) can be read off the same arms, and rules
compared on identical GPU states instead of on sweeps an hour apart.

  stopping_replay.py dump RUN_DIR... --out arms.npz    (on the GPU machine: the samples, compact)
  stopping_replay.py replay arms.npz...                  (anywhere: the rules' drifts and costs)

Wall time of a prefix is read as the arm's sampling phase scaled by the prefix's share of its
samples (the phase's seconds are recorded in each result). Needs numpy.
"""
import glob
import json
import math
import os
import sys

import numpy as np


def dump(run_dirs, out):
    arrays, meta = {}, []
    for run in run_dirs:
        tag = os.path.basename(run.rstrip("/"))
        for f in sorted(glob.glob(run + "/results/*/*.json")):
            r = json.load(open(f))
            m = r["measurement"]
            shape, arm = f.split("/")[-2], os.path.basename(f)[:-5]
            key = f"{len(meta)}"
            arrays[key + "_ns"] = np.asarray(m["samples_ns"], dtype=np.float64)
            arrays[key + "_mhz"] = np.asarray(m.get("clock", {}).get("sample_mhz", []), dtype=np.float32)
            sampling = next((p["seconds"] for p in m.get("phases", []) if p["name"] == "sampling"), None)
            meta.append({"run": tag, "shape": shape, "arm": arm, "variant": r["invocation"]["variant"]
                         if "invocation" in r and "variant" in r["invocation"] else "",
                         "sampling_s": sampling, "stop_reason": m.get("stop_reason", "")})
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(out, **arrays)
    print(f"dumped {len(meta)} arms to {out}")


def robust_sigma(x):
    med = np.median(x)
    return med, 1.4826 * np.median(np.abs(x - med))


def clock_slope(ns, mhz):
    """core/stats/statistics.cpp clock_slope: log-log fit, one pass dropping 5-sigma residuals."""
    if len(ns) < 3 or len(mhz) != len(ns):
        return 0.0
    x, y = np.log(mhz.astype(np.float64)), np.log(ns)
    use = np.ones(len(x), bool)
    slope = 0.0
    for p in range(2):
        if use.sum() < 3:
            break
        mx, my = x[use].mean(), y[use].mean()
        sxx = ((x[use] - mx) ** 2).sum()
        if sxx / use.sum() < 1e-10:
            return 0.0
        slope = ((x[use] - mx) * (y[use] - my)).sum() / sxx
        if p == 1:
            break
        res = y - my - slope * (x - mx)
        med, sig = robust_sigma(res)
        use = np.abs(res - med) <= 5 * sig
    return float(np.clip(slope, -1.0, 0.0))


def adjusted(ns, mhz, ref):
    if len(mhz) != len(ns) or ref is None:
        return ns
    return ns * (ref / mhz.astype(np.float64)) ** clock_slope(ns, mhz)


def median_rank(n, conf):
    """core/stats/median_interval.cpp median_rank: the largest j with P(j <= B <= n - j) >= conf."""
    if n < 2:
        return 0
    j = n // 2
    pmf = math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) - n * math.log(2))
    covered = pmf if n % 2 == 0 else 2 * pmf
    while covered < conf:
        if j == 1:
            return 0
        pmf *= j / (n - j + 1)
        covered += 2 * pmf
        j -= 1
    return j


def rank_inflation(v, med):
    n = len(v)
    blocks = int(math.sqrt(n))
    if blocks < 4:
        return 1.0
    ln = n // blocks
    used = blocks * ln
    below = np.where(v[:used] < med, 1.0, np.where(v[:used] == med, 0.5, 0.0))
    var_each = below.var(ddof=1)
    if not var_each > 0:
        return 1.0
    var_blocks = below.reshape(blocks, ln).mean(axis=1).var(ddof=1)
    return max(1.0, ln * var_blocks / var_each)


def median_halfwidth(v, conf=0.95):
    """core/stats/median_interval.cpp: the relative half-width of the median's interval."""
    n = len(v)
    s = np.sort(v)
    med = float(np.median(s))
    eff = int(n / rank_inflation(v, med))
    j = median_rank(eff, conf)
    if j == 0:
        return math.inf
    r = max(1, j * (n + 1) // (eff + 1))
    return (s[n - r] - s[r - 1]) / 2 / med


def stop_point(v, wall_per_sample, rule):
    """The sample count at which `rule` stops, checked at the worker's geometric batch points."""
    kind, target, min_wall, halves = rule
    n = 10
    while n < len(v):
        ok = n * wall_per_sample >= min_wall
        if ok and kind == "precision":
            ok = median_halfwidth(v[:n]) <= target
            if ok and halves:
                h = n // 2
                a, b = np.median(v[:h]), np.median(v[h:n])
                ok = abs(b / a - 1) <= halves * target
        if ok:
            return n
        n += max(1, n // 4)
    return len(v)


def replay(files):
    rules = {
        "precision 0.1%": ("precision", 0.001, 0.0, 0),
        "precision 0.1%, 50 ms": ("precision", 0.001, 0.05, 0),
        "precision 0.1%, 100 ms": ("precision", 0.001, 0.10, 0),
        "precision 0.1%, 200 ms": ("precision", 0.001, 0.20, 0),
        "precision 0.1%, halves 2x": ("precision", 0.001, 0.0, 2),
        "precision 0.1%, 50 ms, halves 2x": ("precision", 0.001, 0.05, 2),
        "precision 0.05%, 100 ms": ("precision", 0.0005, 0.10, 0),
        "whole arm": ("whole", 0, 0, 0),
    }
    shapes = {}
    for f in files:
        z = np.load(f)
        meta = json.loads(bytes(z["meta"]).decode())
        for i, m in enumerate(meta):
            ns, mhz = z[f"{i}_ns"], z[f"{i}_mhz"]
            shapes.setdefault((f, m["run"], m["shape"]), []).append((m, ns, mhz))
    results = {r: {"drifts": [], "wall": 0.0, "samples": 0} for r in rules}
    for (f, run, shape), arms in sorted(shapes.items()):
        pooled = np.concatenate([a[2] for a in arms]) if all(len(a[2]) for a in arms) else None
        ref = float(np.median(pooled)) if pooled is not None and len(pooled) else None
        by_arm = {}
        for m, ns, mhz in arms:
            # Without the recorded phase (older results): the sample itself plus ~25 us of the
            # host's share per sample (preparation, synchronisation, clock stamps).
            wall_per = (m["sampling_s"] / max(1, len(ns)) if m["sampling_s"]
                        else float(np.median(ns)) * 1e-9 + 25e-6)
            for name, rule in rules.items():
                n = len(ns) if rule[0] == "whole" else stop_point(adjusted(ns, mhz, ref), wall_per, rule)
                # The stopped arm's own clock line, fitted on its prefix, as the report would.
                v = adjusted(ns[:n], mhz[:n] if len(mhz) else mhz, ref)
                by_arm.setdefault(name, {})[m["arm"]] = float(np.median(v))
                results[name]["wall"] += n * wall_per
                results[name]["samples"] += n
        for name in rules:
            a = by_arm[name]
            keys = sorted(k for k in a if k.startswith("A"))
            if len(keys) >= 2:
                results[name]["drifts"].append((a[keys[-1]] / a[keys[0]] - 1, run, shape))
    print(f"{'rule':36} {'shapes':>6} {'worst |drift|':>13} {'median |drift|':>14} {'>0.1%':>5} {'>0.3%':>5} {'sampling s':>10} {'samples':>9}")
    for name, r in results.items():
        d = sorted(r["drifts"], key=lambda t: -abs(t[0]))
        absd = [abs(x[0]) for x in d]
        print(f"{name:36} {len(d):6d} {100*max(absd):12.3f}% {100*float(np.median(absd)):13.3f}% "
              f"{sum(x > 0.001 for x in absd):5d} {sum(x > 0.003 for x in absd):5d} {r['wall']:10.1f} {r['samples']:9d}")
        if d and abs(d[0][0]) > 0.003:
            print(f"    worst: {100*d[0][0]:+.3f}% {d[0][1]} {d[0][2]}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "dump":
        args = sys.argv[2:]
        out = args[args.index("--out") + 1]
        dump([a for a in args if a not in ("--out", out)], out)
    elif len(sys.argv) >= 3 and sys.argv[1] == "replay":
        replay(sys.argv[2:])
    else:
        sys.exit(__doc__)
