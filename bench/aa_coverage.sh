#!/usr/bin/env bash
# How honest are the A/A intervals, and what does a sweep cost? Runs bench/aa_sweep.sh SWEEPS
# times (default 5) for one precision (default bf16) in one work directory (the plugin is built
# once, then cached), and prints, over every sweep's shapes: how many 95 % speedup intervals hold
# 1 (an A/A's true speedup; target about 95 %), how many shapes were called `same`, the worst
# |drift|, each sweep's wall time and arms span, and the samples per arm with why the arms stopped
# (the stopping rule's evidence in each result).
#
# usage: bench/aa_coverage.sh [SWEEPS] [precision]      (BIN as for aa_sweep.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sweeps=${1:-5}
prec=${2:-bf16}
export WORK=${WORK:-$(mktemp -d /tmp/abh-cov.XXXXXX)}
mkdir -p "$WORK"
for i in $(seq 1 "$sweeps"); do
  RUN_TAG=cov$i bash "$root/bench/aa_sweep.sh" "$prec" | tee "$WORK/sweep$i.txt" | grep -E "^== |worst|arms span"
done
python3 - "$WORK" "$prec" "$sweeps" <<'PY'
import collections, glob, json, statistics, sys
work, prec, sweeps = sys.argv[1], sys.argv[2], int(sys.argv[3])
held = total = same = 0
worst = 0.0
samples, causes = [], collections.Counter()
for i in range(1, sweeps + 1):
    run = f"{work}/runs/aa_{prec}_cov{i}"
    rep = json.load(open(run + "/report.json"))
    for s in rep["shapes"]:
        if s.get("ci") is None:
            continue
        total += 1
        held += s["ci"]["lo"] <= 1 <= s["ci"]["hi"]
        same += s["verdict"] == "same"
        if s.get("drift"):
            worst = max(worst, abs(s["drift"] - 1))
    for f in glob.glob(run + "/results/*/*.json"):
        m = json.load(open(f))["measurement"]
        samples.append(len(m["samples_ns"]))
        causes[(m.get("stop") or {}).get("cause", "(no evidence)")] += 1
walls = []
for i in range(1, sweeps + 1):
    for line in open(f"{work}/sweep{i}.txt"):
        if line.startswith("== A/A"):
            walls.append(float(line.split("sweep wall ")[1].split(" s")[0]))
print(f"A/A {prec}, {sweeps} sweeps, {total} shapes: interval holds 1 in {held}/{total} "
      f"({100 * held / max(total, 1):.1f} %), `same` {same}/{total}, worst |drift| {worst * 100:.3f} %")
print(f"sweep wall s: {', '.join(f'{w:.1f}' for w in walls)} (the first also builds the plugin)")
print(f"samples per arm: median {statistics.median(samples):.0f}, min {min(samples)}, max {max(samples)}; "
      f"stop causes {dict(causes)}")
PY
