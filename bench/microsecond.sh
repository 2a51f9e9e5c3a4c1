#!/usr/bin/env bash
# Microsecond Python kernels, abharness beside the usual script in one call: the RMSNorm example
# (examples/python-rmsnorm: eager PyTorch, nine kernels at one row, against one Triton kernel) over 14
# shapes, rows 1..8192 x hidden 4096 and 8192, bf16.
#   1. abharness A/B/A (baseline eager, candidate Triton) in TIMINGS (default kernel): wall time,
#      per-shape speedups, and where each Python arm's time goes (its worker log's phases);
#   2. abharness A/A of the baseline in the same timings: worst drift, verdicts (SKIP_AA=1: not);
#   3. the usual script (bench/usual_rmsnorm.py: triton.testing.do_bench, a process per arm, in
#      A1/B/A2 order): wall time, speedups and A1/A2 drift (SKIP_USUAL=1: not).
# Targets: the A/B/A <= 40 s wall; A/A worst drift <= 0.1 % (kernel), <= 0.3 % (graph), every A/A
# shape `same`. Logs under $OUT; a short table last.
#
# usage: OUT=/tmp/us BIN=.carry/bundle/bin PY=/opt/torch/.venv/bin/python3 [TIMINGS=kernel,graph]
#        bench/microsecond.sh [extra abharness run flags]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
OUT=${OUT:-/tmp/microsecond}
PY=${PY:-/opt/torch/.venv/bin/python3}
TIMINGS=${TIMINGS:-kernel}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/bench.log") 2>&1
nvidia-smi -L >/dev/null 2>&1 || { echo "microsecond: no GPU here"; exit 77; }
[[ -d $BIN/../lib ]] && export LD_LIBRARY_PATH=$BIN/../lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary=()
now() { date +%s.%N; }
since() { python3 -c "print(round($(now) - $1, 1))"; }
cd "$OUT" && rm -rf repo runs && "$root/examples/make-demo-repo.sh" rmsnorm repo >/dev/null
python3 - >grid.json <<'PY'
import json
shapes = [{"id": f"r{r}_h{h}", "params": {"rows": r, "hidden": h}}
          for h in (4096, 8192) for r in (1, 4, 16, 64, 256, 1024, 8192)]
print(json.dumps({"schema_version": 1, "shapes": shapes}))
PY
run() {  # NAME BASELINE CANDIDATE
  local t0 rc=0
  t0=$(now)
  "$BIN/abharness" run --repo repo --baseline "$2" --candidate "$3" --target rmsnorm --python "$PY" \
    --grid grid.json --runs-root runs --run-id "$1" --timing "$TIMINGS" --color never "${@:4}" \
    >"$1.out" 2> >(while IFS= read -r l; do printf '%s %s\n' "$(now)" "$l"; done >"$1.err") || rc=$?
  echo "$t0 start" >"$1.t0"
  summary+=("abharness $1 ($2 vs $3, timing $TIMINGS): exit $rc, wall $(since "$t0") s")
  tail -40 "$1.out"
}
run ab HEAD~1 HEAD "${@}"
[[ -n ${SKIP_AA:-} ]] || run aa HEAD~1 HEAD~1 "${@}"
python3 - runs <<'PY' | tee phases.txt
import glob, json, re, statistics, sys
# Where a Python arm's time goes: its worker log's timestamped phases (worker/arm.cpp).
phases = {}
for f in glob.glob(sys.argv[1] + "/ab/logs/*/*.out"):
    if ".warmup" in f:
        continue
    last = 0.0
    for line in open(f, errors="replace"):
        m = re.match(r".*?\[([0-9.]+) s\] (.*)", line)
        if not m:
            continue
        t, what = float(m.group(1)), re.sub(r"[0-9.]+", "#", m.group(2))[:40]
        phases.setdefault(what, []).append(t - last)
        last = t
print("phase (median s over the A/B/A's arms, from the previous phase):")
for what, v in sorted(phases.items(), key=lambda kv: -statistics.median(kv[1]))[:14]:
    print(f"  {statistics.median(v):7.3f}  {what}  (n={len(v)})")
# The turn-to-turn cadence: a progress line's wall is its arm's turn to its process's reaping;
# the worker's own stamps say how much of that was the arm's phases, the rest is the exit.
import os
for run in ("ab", "aa"):
    errf = f"{sys.argv[1]}/../{run}.err"
    if not os.path.exists(errf):
        continue
    t0 = float(open(f"{sys.argv[1]}/../{run}.t0").read().split()[0])
    prog = []
    for line in open(errf, errors="replace"):
        m = re.match(r"([0-9.]+) \[\s*\d+/\d+\] (\S+)/(\S+) ok ([0-9.]+) s", line)
        if m:
            prog.append((float(m.group(1)) - t0, m.group(2), m.group(3), float(m.group(4))))
    if not prog:
        continue
    exits = []
    for _, shape, arm, wall in prog:
        stamps = {}
        for l in open(f"{sys.argv[1]}/{run}/logs/{shape}/{arm}.out", errors="replace"):
            m = re.match(r".*?\[([0-9.]+) s\] (.*)", l)
            if m:
                for key in ("turn to open", "result written"):
                    if m.group(2).startswith(key):
                        stamps[key] = float(m.group(1))
        if len(stamps) == 2:
            exits.append(wall - (stamps["result written"] - stamps["turn to open"]))
    walls = [p[3] for p in prog]
    end = prog[-1][0]
    print(f"{run}: first arm reaped at {prog[0][0]:.1f} s, last at {end:.1f} s; {len(prog)} arms, "
          f"turn-to-reap median {statistics.median(walls):.3f} s, sum {sum(walls):.1f} s; "
          f"after 'result written' median {statistics.median(exits) if exits else -1:.3f} s "
          f"max {max(exits) if exits else -1:.3f} s")
for run in ("ab", "aa"):
    if not os.path.exists(f"{sys.argv[1]}/{run}/report.json"):
        continue
    rep = json.load(open(f"{sys.argv[1]}/{run}/report.json"))
    drifts = [abs(s["drift"] - 1) for s in rep["shapes"] if s.get("drift")]
    print(run, "verdicts", rep["summary"]["verdicts"], "worst drift %.3f %%" % (100 * max(drifts)))
    for s in rep["shapes"]:
        arms = {a["arm"]: a for a in s["arms"]}
        print(f"  {s['shape']:22} {s['verdict']:8} speedup {s['speedup'] or 0:7.3f} drift "
              f"{100 * ((s['drift'] or 1) - 1):+6.3f} %  samples "
              + " ".join(str(a.get("samples", "?")) for a in s["arms"]))
PY
# The usual script: a process per arm, A1 (eager) / B (Triton) / A2 (eager). SKIP_USUAL=1: not
# (when another call of the same hour measured it).
if [[ -z ${SKIP_USUAL:-} ]]; then
git -C repo worktree add -q ../base HEAD~1 && git -C repo worktree add -q ../cand HEAD
t0=$(now)
for arm in A1 B A2; do
  src=base; [[ $arm == B ]] && src=cand
  "$PY" "$root/bench/usual_rmsnorm.py" "$src" grid.json >"usual_$arm.txt" 2>"usual_$arm.err" || tail -5 "usual_$arm.err"
done
summary+=("usual script (do_bench, a process per arm, A1/B/A2): wall $(since "$t0") s")
python3 - <<'PY' | tee usual.txt
a1, b, a2 = ({l.split()[0]: float(l.split()[1]) for l in open(f"usual_{x}.txt")} for x in ("A1", "B", "A2"))
drift = [abs(a2[s] / a1[s] - 1) for s in a1]
print("usual: worst A1/A2 drift %.1f %%" % (100 * max(drift)))
for s in a1:
    print(f"  {s:22} speedup {(a1[s] + a2[s]) / 2 / b[s]:7.3f}  drift {100 * (a2[s] / a1[s] - 1):+6.2f} %  "
          f"eager {a1[s] * 1e3:8.2f} us  triton {b[s] * 1e3:8.2f} us")
PY
fi
printf '%s\n' "" "================ microsecond ================" "${summary[@]}"
grep -E "^(ab|aa) verdicts|usual: worst" phases.txt usual.txt 2>/dev/null
