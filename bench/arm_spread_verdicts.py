#!/usr/bin/env python3
"""How many A/A shapes read `same`, as a function of how far apart fresh processes read.

A GPU arm's median is precise to +-0.1 % within itself, but fresh processes of one build can read
0.4-1.8 % apart (docs/measurements.md section 46): an A/A's verdict is then set by that
between-process spread and by the number of blocks, not by the samples. This bench puts arm
medians of a chosen spread into real run directories and has the real `abharness report` judge
them, so the verdict model (arm-level intervals moderated across shapes, drift, disturbed arms)
is the product's own, not a re-implementation.

  1. A CPU A/A of SHAPES shapes with --rounds K is run once for each K in ROUNDS (the CPU example,
     short arms: only the run directories are wanted, with valid plans and results).
  2. For each SIGMA and TRIAL, every result's samples are replaced: the arm's median is
     20 us x exp(SIGMA z), z standard normal per arm (a process's level), and its 101 samples
     spread around it by WITHIN (lognormal quantiles, so the arm's median is that level); the
     payload digest is recomputed as the harness computes it (tests/json_edit.py).
  3. `abharness report` judges the run; the bench counts `same`, `ambiguous`, `unstable` and
     `faster`/`slower` per shape, and runs whose every shape is `same`.

With --levels GAP,P,N the last N shapes of the grid are shapes whose processes fall at two
levels (as some GEMMs and eager kernels do on the H200, docs/measurements.md): each arm reads the
upper level, GAP above the lower, with probability P, besides its SIGMA; the other shapes are
quiet. The lines then count the quiet and the two-level shapes apart. --report-flag passes a flag
to `abharness report` (e.g. --prior-conflict-pooled), to compare a rule with another on the same
draws.

Prints one line per (SIGMA, K): the share of shapes `same`, of runs all `same`, false calls, and
the median interval half-width. CPU only (no GPU needed: the statistics do not know the timer).

usage: BIN=build/bin bench/arm_spread_verdicts.py [--sigmas 0.001,0.002,0.004] [--rounds 1,2,3]
       [--trials 20] [--shapes 14] [--band 0.01] [--work /tmp/arm_spread]
       [--levels 0.02,0.3,4] [--report-flag --prior-conflict-pooled]
"""
import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import json_edit  # noqa: E402  (the tests' forger: edits a result and recomputes its digest)


def rewrite_samples(path, level_ns, quantiles, within):
    j = json_edit.load(path)
    m = j["measurement"]
    # Values at 0.1 ns, whose shortest text is the same in Python and in the harness.
    m["samples_ns"] = [round(level_ns * math.exp(within * q), 1) for q in quantiles]
    m.pop("stop", None)
    json_edit.redigest(j)
    json_edit.write(path, j)


def make_runs(args, abh):
    os.makedirs(args.work, exist_ok=True)
    repo = os.path.join(args.work, "repo")
    if not os.path.isdir(repo):
        subprocess.run([os.path.join(ROOT, "examples/make-demo-repo.sh"), "cpu", repo], check=True,
                       stdout=subprocess.DEVNULL)
    grid = os.path.join(args.work, "grid.json")
    json.dump({"schema_version": 1, "shapes": [
        {"id": f"s{i:02d}", "params": {"m": 8 + i, "n": 8, "k": 8}} for i in range(args.shapes)]},
        open(grid, "w"))
    runs = {}
    for k in args.rounds:
        run = os.path.join(args.work, "runs", f"k{k}")
        if not os.path.exists(os.path.join(run, "report.json")):
            shutil.rmtree(run, ignore_errors=True)
            subprocess.run([abh, "run", "--repo", repo, "--baseline", "HEAD", "--candidate", "HEAD",
                            "--grid", grid, "--runs-root", os.path.join(args.work, "runs"),
                            "--run-id", f"k{k}", "--rounds", str(k), "--until-decided", "0",
                            "--min-samples", "101", "--max-samples", "101", "--min-time", "0",
                            "--warmup", "1", "--quiet", "--color", "never"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not os.path.exists(os.path.join(run, "report.json")):
            sys.exit(f"arm_spread_verdicts: the CPU run {run} did not complete (no report.json)")
        runs[k] = run
    return runs


def judge(abh, run, band, flags):
    for f in os.listdir(run):
        if f.startswith("report."):
            os.remove(os.path.join(run, f))
    p = subprocess.run([abh, "report", run, "--noise-band", str(band)] + flags,
                       capture_output=True, text=True)
    if not os.path.exists(os.path.join(run, "report.json")):
        sys.exit(f"arm_spread_verdicts: report refused {run}: {p.stderr[-2000:]}")
    rep = json.load(open(os.path.join(run, "report.json")))
    return [(s["verdict"], s.get("ci"), s["shape"]) for s in rep["shapes"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sigmas", default="0.0005,0.001,0.002,0.004")
    ap.add_argument("--rounds", default="1,2,3")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--shapes", type=int, default=14)
    ap.add_argument("--band", type=float, default=0.01)
    ap.add_argument("--within", type=float, default=0.004,
                    help="spread of an arm's samples (0.4 %%: its median to about +-0.1 %%)")
    ap.add_argument("--work", default="/tmp/arm_spread")
    ap.add_argument("--levels", default="",
                    help="GAP,P,N: the last N shapes read GAP higher with probability P per arm")
    ap.add_argument("--report-flag", action="append", default=[],
                    help="a flag for `abharness report` (repeatable)")
    args = ap.parse_args()
    gap, p_up, n_two = (0.0, 0.0, 0)
    if args.levels:
        gap, p_up, n_two = (float(x) for x in args.levels.split(","))
        n_two = int(n_two)
    args.rounds = [int(x) for x in args.rounds.split(",")]
    sigmas = [float(x) for x in args.sigmas.split(",")]
    abh = os.path.join(os.environ.get("BIN", os.path.join(ROOT, "build/bin")), "abharness")
    runs = make_runs(args, abh)
    n = 101
    quantiles = [statistics.NormalDist().inv_cdf((i + 0.5) / n) for i in range(n)]
    random.seed(1)
    two_level = {f"s{i:02d}" for i in range(args.shapes - n_two, args.shapes)}
    print(f"{args.shapes} A/A shapes, band {args.band:.2%}, arms' own spread {args.within:.2%}, "
          f"{args.trials} trials per line" +
          (f"; {n_two} shape(s) at two levels {gap:.2%} apart (upper: p {p_up})" if n_two else "") +
          (f"; report {' '.join(args.report_flag)}" if args.report_flag else ""))
    print(f"{'sigma':>7} {'blocks':>6} {'same':>7} {'all same':>9} {'ambiguous':>9} {'unstable':>8} "
          f"{'false':>6} {'median half-width':>18}" +
          (f" {'two-level: same':>15} {'false':>5}" if n_two else ""))
    for sigma in sigmas:
        for k, run in runs.items():
            counts = {"same": 0, "ambiguous": 0, "unstable": 0, "false": 0}
            all_same, widths, total = 0, [], 0
            two = {"same": 0, "false": 0, "total": 0}
            for _ in range(args.trials):
                trial = run + ".trial"
                shutil.rmtree(trial, ignore_errors=True)
                shutil.copytree(run, trial, symlinks=True)
                for shape in sorted(os.listdir(os.path.join(trial, "results"))):
                    d = os.path.join(trial, "results", shape)
                    for f in sorted(os.listdir(d)):
                        if f.endswith(".json"):
                            level = 20000 * math.exp(sigma * random.gauss(0, 1))
                            if shape in two_level and random.random() < p_up:
                                level *= 1 + gap
                            rewrite_samples(os.path.join(d, f), level, quantiles, args.within)
                verdicts = judge(abh, trial, args.band, args.report_flag)
                all_same += all(v == "same" for v, _, _ in verdicts)
                failed = [v for v, _, _ in verdicts if v == "failed"]
                if failed:
                    sys.exit(f"arm_spread_verdicts: {len(failed)} shape(s) failed in {trial}")
                for v, ci, shape in verdicts:
                    if shape in two_level:
                        two["total"] += 1
                        two["same"] += v == "same"
                        two["false"] += v in ("faster", "slower")
                        continue
                    total += 1
                    key = "false" if v in ("faster", "slower") else v
                    counts[key] = counts.get(key, 0) + 1
                    if ci:
                        widths.append((ci["hi"] - ci["lo"]) / 2)
            print(f"{sigma:7.2%} {k:6d} {counts['same'] / total:7.1%} {all_same / args.trials:9.1%} "
                  f"{counts['ambiguous'] / total:9.1%} {counts['unstable'] / total:8.1%} "
                  f"{counts['false']:6d} {statistics.median(widths) if widths else float('nan'):18.4f}" +
                  (f" {two['same'] / max(two['total'], 1):15.1%} {two['false']:5d}" if n_two else ""),
                  flush=True)


if __name__ == "__main__":
    main()
