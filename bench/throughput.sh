#!/usr/bin/env bash
# One GPU's throughput, and what starting workers ahead does to the measurement: the 16-shape A/A
# sweep of bench/aa_sweep.sh with every worker started after the one before it ended
# (--start-ahead 0) and with each worker started while the arm before it measures, waiting
# with its plan, plugin and GPU driver loaded for its turn to create its CUDA context (the
# default on a GPU, docs/method.md), alternating, ROUNDS times each (default 2), in one call and
# with the plugin's build cached for all of them (a two-shape run fills the cache first). Prints
# each sweep's table, then one line per sweep (wall, arms span, per arm, worker ready median and
# max, worst drift, verdicts) and the arm medians of the memory-bound m1 shapes side by side: the
# shapes a neighbouring CUDA context was seen to move (docs/measurements.md).
#
# usage: bench/throughput.sh [precision]     (BIN=<dir with abharness>, default build/bin)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prec=${1:-bf16}
rounds=${ROUNDS:-2}
nvidia-smi -L >/dev/null 2>&1 || { echo "throughput: no GPU here (nvidia-smi -L failed)" >&2; exit 77; }
work=${WORK:-$(mktemp -d /tmp/abh-throughput.XXXXXX)}
mkdir -p "$work"
export WORK=$work

SHAPES_M=1 RUN_TAG=cache ABH_FLAGS="--gpus 0 --max-time 0.05" bash "$root/bench/aa_sweep.sh" "$prec" \
  >"$work/cache.txt" 2>&1 || { cat "$work/cache.txt"; exit 1; }
sweeps=()
# Off first in odd rounds, on first in even ones: a GPU that warms up over the call then weighs on
# both alike.
for r in $(seq 1 "$rounds"); do
  modes="off on"
  [ $((r % 2)) -eq 0 ] && modes="on off"
  for mode in $modes; do
    tag=ahead_${mode}_$r
    ahead=auto
    [ "$mode" = off ] && ahead=0
    RUN_TAG=$tag ABH_FLAGS="--gpus 0 --start-ahead $ahead" bash "$root/bench/aa_sweep.sh" "$prec" \
      | tee "$work/$tag.txt"
    sweeps+=("$tag")
  done
done

python3 - "$work" "$prec" "${sweeps[@]}" <<'PY'
import glob, json, re, statistics, sys
work, prec, tags = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"\n{'sweep':14} {'wall':>7} {'span':>7} {'per arm':>8} {'ready med':>10} {'ready max':>10} "
      f"{'waited med':>10} {'worst drift':>12}  verdicts")
m1 = {}
for tag in tags:
    text = open(f"{work}/{tag}.txt").read()
    wall = float(re.search(r"sweep wall ([\d.]+) s", text).group(1))
    span = float(re.search(r"arms span ([\d.]+) s", text).group(1))
    worst = re.search(r"worst \|drift\| ([\d.]+)%", text).group(1)
    run = f"{work}/runs/aa_{prec}_{tag}"
    rs = [json.load(open(f)) for f in glob.glob(run + "/results/*/*.json")]
    ready = sorted(r["measurement"]["ready_s"] for r in rs)
    waited = [r["measurement"].get("waited_s", 0) for r in rs]
    rep = json.load(open(run + "/report.json"))
    verdicts = {}
    for s in rep["shapes"]:
        verdicts[s["verdict"]] = verdicts.get(s["verdict"], 0) + 1
        if s["shape"].startswith("m1_"):
            arms = {a["arm"]: a["median_ns"] / 1e3 for a in s["arms"] if a.get("ok")}
            m1.setdefault(s["shape"], []).append(
                (tag, " / ".join(f"{arms.get(a, float('nan')):.2f}" for a in ("A1", "B", "A2"))))
    print(f"{tag:14} {wall:6.1f}s {span:6.1f}s {span / len(rs):7.3f}s {statistics.median(ready):9.3f}s "
          f"{max(ready):9.3f}s {statistics.median(waited):9.3f}s {worst:>11}%  {verdicts}")
print("\nm1 shapes, arm medians in us (A1 / B / A2):")
for shape, rows in m1.items():
    for tag, medians in rows:
        print(f"  {shape:28} {tag:14} {medians}")
PY
echo "work directory: $work"
