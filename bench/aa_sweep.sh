#!/usr/bin/env bash
# The noise-floor check: an A/A sweep (the same revision on both sides) of the cuBLASLt
# plugin over the 16-shape reference grid, M in {1,8,32,128,512,1024,2048,4096} x (N,K) in
# {(6656,19968),(19968,6656)}, for each precision given (default: bf16 fp8). Prints per-shape drift
# (A2/A1) and A/A speedup, the geomean, and the sweep's wall time; then times a resume of the
# finished sweep. Targets: every drift within +-0.5 %, geomean within +-0.2 % of 1, a 48-arm sweep
# with builds cached under 60 s, a resume under 2 s.
#
# usage: bench/aa_sweep.sh [precision ...]     (BIN=<dir with abharness>, default build/bin)
#        extra flags for `abharness run` go in ABH_FLAGS, e.g. ABH_FLAGS="--max-time 3"
#        SHAPES_M="1 8" narrows the grid's M values; SHAPES_NK="4096x4096 4096x16384" replaces its
#        (N, K) pairs (e.g. decode GEMMs of 10-20 us); RUN_TAG=x names the run aa_<precision>_x
#        (runs of one WORK share its build cache)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
precisions=("$@")
[ ${#precisions[@]} -gt 0 ] || precisions=(bf16 fp8)
nvidia-smi -L >/dev/null 2>&1 || { echo "aa_sweep: no GPU here (nvidia-smi -L failed)" >&2; exit 77; }
work=${WORK:-$(mktemp -d /tmp/abh-aa.XXXXXX)}
mkdir -p "$work"

# A throw-away repository holding the built-in kernels and the manifest, as a kernel library would.
source "$root/bench/kernel_repo.sh"
repo=$work/repo
kernel_repo "$repo"

for prec in "${precisions[@]}"; do
  grid=$work/grid_$prec.json
  SHAPES_NK=${SHAPES_NK:-6656x19968 19968x6656} python3 - "$prec" ${SHAPES_M:-1 8 32 128 512 1024 2048 4096} > "$grid" <<'PY'
import json, os, sys
prec = sys.argv[1]
shapes = []
for n, k in [tuple(map(int, nk.split("x"))) for nk in os.environ["SHAPES_NK"].split()]:
    for m in map(int, sys.argv[2:]):
        shapes.append({"id": f"m{m}_n{n}_k{k}_{prec}", "params": {"m": m, "n": n, "k": k, "precision": prec}})
print(json.dumps({"schema_version": 1, "shapes": shapes}, indent=1))
PY
  run=aa_$prec${RUN_TAG:+_$RUN_TAG}
  rm -rf "$work/runs/$run"
  t0=$(date +%s.%N)
  set +e
  # shellcheck disable=SC2086
  "$BIN/abharness" run --repo "$repo" --baseline HEAD --candidate HEAD --target cuda \
    --grid "$grid" --runs-root "$work/runs" --run-id "$run" --color never ${ABH_FLAGS:-} \
    >"$work/$run.out" 2>"$work/$run.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  "$BIN/abharness" resume "$work/runs/$run" --quiet >/dev/null 2>"$work/$run.resume.err" || true
  t2=$(date +%s.%N)
  echo "== A/A $prec: exit $rc, sweep wall $(python3 -c "print(f'{$t1-$t0:.1f}')") s, resume of the finished sweep $(python3 -c "print(f'{$t2-$t1:.2f}')") s"
  python3 - "$work/runs/$run" <<'PY'
import json, sys, math
run = sys.argv[1]
rep = json.load(open(run + "/report.json"))
worst = 0
print(f"{'shape':32} {'A1':>12} {'B':>12} {'A2':>12} {'drift':>8} {'A/A':>8}  verdict")
for s in rep["shapes"]:
    arms = {a["arm"]: a for a in s["arms"]}
    t = lambda a: f"{arms[a]['median_ns']/1e3:10.2f}us" if a in arms and arms[a].get("ok") else "   failed"
    d = s.get("drift"); sp = s.get("speedup")
    if d: worst = max(worst, abs(d - 1))
    print(f"{s['shape']:32} {t('A1'):>12} {t('B1' if 'B1' in arms else 'B'):>12} {t('A2'):>12} "
          f"{(d-1)*100 if d else float('nan'):+7.2f}% {sp if sp else float('nan'):8.4f}  {s['verdict']}")
agg = rep["summary"]
print(f"geomean A/A {agg['geomean']:.4f} (CI {agg['geomean_ci']['lo']:.4f}..{agg['geomean_ci']['hi']:.4f}); "
      f"worst |drift| {worst*100:.2f}%; ready_s per arm in results/*/*.json")
ready = []
import glob
for f in glob.glob(run + "/results/*/*.json"):
    ready.append(json.load(open(f))["measurement"]["ready_s"])
print(f"worker ready: median {sorted(ready)[len(ready)//2]:.3f} s, max {max(ready):.3f} s over {len(ready)} arms")
# The arms' own span, first worker start to last result: the sweep without its builds (the first
# sweep of a fresh machine also builds the plugin; later ones hit the build cache).
import datetime
ts = lambda x: datetime.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()
rs = [json.load(open(f)) for f in glob.glob(run + "/results/*/*.json")]
span = max(ts(r["finished_at"]) for r in rs) - min(ts(r["started_at"]) for r in rs)
kept = sum(len(r["measurement"]["samples_ns"]) for r in rs)
rej = sum(r["measurement"].get("clock", {}).get("rejected", 0) for r in rs)
pause = sum(r["measurement"].get("clock", {}).get("recovery_s", 0) for r in rs)
print(f"arms span {span:.1f} s (first worker start to last result); samples kept {kept}, "
      f"discarded by the clock floor {rej}, recovery pauses {pause:.1f} s")
# Where an arm's time goes: each phase's median time since its worker started, from the arms'
# logs ("[0.276 s] device session open, ..."), and the median gap from one result to the next
# worker start of the same GPU.
import re, statistics
phases = {}
for f in glob.glob(run + "/logs/*/*.out"):
    if ".warmup." in f or "/probe/" in f:
        continue
    for line in open(f, errors="replace"):
        m = re.match(r"\[(\d+\.\d+) s\] (plan read|plugin loaded|device session open|problem created|timer ready|tactic|\d+ samples|verified|result written)", line)
        if m:
            key = "sampled" if m.group(2)[0].isdigit() else m.group(2)
            phases.setdefault(key, []).append(float(m.group(1)))
order = ["plan read", "plugin loaded", "device session open", "problem created", "timer ready",
         "tactic", "sampled", "verified", "result written"]
print("phase medians (s since worker start): " +
      ", ".join(f"{k} {statistics.median(phases[k]):.3f}" for k in order if k in phases))
gaps = []
by_gpu = {}
for r in rs:
    by_gpu.setdefault(r["environment"]["gpu"]["uuid"] if r.get("environment", {}).get("gpu") else "", []).append(r)
for arms in by_gpu.values():
    arms.sort(key=lambda r: ts(r["started_at"]))
    gaps += [ts(b["started_at"]) - ts(a["finished_at"]) for a, b in zip(arms, arms[1:])]
if gaps:
    print(f"gap from a result to the same GPU's next arm start: median {statistics.median(gaps):.3f} s "
          f"over {len(by_gpu)} GPU(s)")
# The turn-to-turn cadence: a progress line's wall is its arm's turn to its process's reaping; the
# worker's own stamps say how much of that was the arm's phases, the rest is its exit.
import os
err = os.path.join(os.path.dirname(os.path.dirname(run)), os.path.basename(run) + ".err")
walls, exits = [], []
for line in open(err, errors="replace") if os.path.exists(err) else []:
    m = re.match(r"\[\s*\d+/\d+\] (\S+)/(\S+) ok ([0-9.]+) s", line)
    if not m:
        continue
    walls.append(float(m.group(3)))
    stamps = {}
    for l in open(f"{run}/logs/{m.group(1)}/{m.group(2)}.out", errors="replace"):
        s = re.match(r"\[([0-9.]+) s\] (turn to open|result written)", l)
        if s:
            stamps[s.group(2)] = float(s.group(1))
    if len(stamps) == 2:
        exits.append(walls[-1] - (stamps["result written"] - stamps["turn to open"]))
if walls and exits:
    print(f"turn to reaping: median {statistics.median(walls):.3f} s, sum {sum(walls):.1f} s over "
          f"{len(walls)} arms; after 'result written': median {statistics.median(exits):.3f} s")
PY
done
echo "work directory: $work"
