#!/usr/bin/env bash
# How decisive and how honest are verdicts on a CPU machine, idle and loaded? Each KIND below runs
# RUNS sweeps one after another with the default statistics (--until-decided auto included) and
# prints what a user would read from them:
#   demo        the README demo (examples/cpu-gemm/shapes.json, --max-time 2, HEAD~1 naive against
#               HEAD blocked, a 2-4x speedup): how many of its 4 shapes came out faster per run;
#   regression  a real 1.8-2.5x regression (HEAD against the naive HEAD~1, four small shapes, the
#               integration tests' fast settings) with --fail-on-regression: exit codes (5 wanted,
#               never 0);
#   aa          HEAD against HEAD on nine small shapes with --fail-on-regression: shape verdicts
#               faster or slower (wrong), exit codes (never 5), the geomean headline (wrong unless
#               same or undecided);
#   numpy       HEAD against HEAD of the NumPy example (Python plugin): as aa.
# Every run's wall time and the extra arms the extension ran are printed as well. It prints numbers;
# it is not a timed unit test.
#
# usage: bench/cpu_verdicts.sh [KIND...]     (default: demo regression aa)
#   BIN=<dir with abharness> (default build/bin)  RUNS=10 (runs per kind)  BUSY=0 (busy loops
#   beside the sweeps)  PYTHON (the NumPy kind's interpreter, default /usr/bin/python3, Debian's
#   with python3-numpy)  ABH_FLAGS (extra flags for every run, e.g. --until-decided 0 for the cost
#   of the planned blocks alone)  WORK=<dir> (kept afterwards; default a fresh /tmp directory)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
RUNS=${RUNS:-10}
BUSY=${BUSY:-0}
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(demo regression aa)
work=${WORK:-$(mktemp -d /tmp/abh-verdicts.XXXXXX)}
mkdir -p "$work"
cd "$work"
[ -d repo ] || "$root/examples/make-demo-repo.sh" cpu repo >/dev/null
[ -d numpy-repo ] || "$root/examples/make-demo-repo.sh" numpy numpy-repo >/dev/null
python3 - <<'PY'
import json
small = [(32, 32, 32), (48, 48, 48), (64, 64, 64), (96, 64, 80)]
nine = small + [(40, 40, 40), (56, 56, 56), (72, 48, 64), (80, 80, 80), (64, 96, 48)]
for name, shapes in (("small.json", small), ("nine.json", nine)):
    json.dump({"schema_version": 1, "shapes": [
        {"id": f"m{m}_n{n}_k{k}", "params": {"m": m, "n": n, "k": k}} for m, n, k in shapes]},
        open(name, "w"))
PY
# The integration tests' fast settings (tests/lib.sh FAST).
FAST=(--min-samples 5 --min-time 0.01 --max-time 0.2 --warmup 1)

busy_pids=()
stop_busy() { for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_busy EXIT
for ((i = 0; i < BUSY; i++)); do
  sh -c 'while :; do :; done' &
  busy_pids+=($!)
done
echo "== $BUSY busy loop(s); abharness: $BIN/abharness; work directory $work"

# run_kind KIND: RUNS sweeps; their exit codes and wall times into $work/KIND-$BUSY.runs
run_kind() {
  local kind=$1 args
  case $kind in
    demo) args=(--repo repo --baseline HEAD~1 --candidate HEAD --target cpu --max-time 2
      --grid "$root/examples/cpu-gemm/shapes.json") ;;
    regression) args=(--repo repo --baseline HEAD --candidate HEAD~1 --target cpu --grid small.json
      "${FAST[@]}" --fail-on-regression) ;;
    aa) args=(--repo repo --baseline HEAD --candidate HEAD --target cpu --grid nine.json
      "${FAST[@]}" --fail-on-regression) ;;
    numpy) args=(--repo numpy-repo --baseline HEAD --candidate HEAD --target numpy
      --python "${PYTHON:-/usr/bin/python3}" --grid "$root/examples/python-numpy/shapes.json"
      "${FAST[@]}" --fail-on-regression) ;;
    *) echo "unknown kind $kind" >&2; exit 2 ;;
  esac
  : >"$work/$kind-$BUSY.runs"
  for ((r = 1; r <= RUNS; r++)); do
    local id="$kind-$BUSY-$r" t0 rc
    rm -rf "runs/$id"
    t0=$(date +%s.%N)
    set +e
    # shellcheck disable=SC2086
    "$BIN/abharness" run "${args[@]}" --runs-root runs --run-id "$id" ${ABH_FLAGS:-} \
      >"$work/$id.out" 2>"$work/$id.err"
    rc=$?
    set -e
    echo "$id $rc $(echo "$(date +%s.%N) - $t0" | bc)" >>"$work/$kind-$BUSY.runs"
  done
}
for kind in "${kinds[@]}"; do run_kind "$kind"; done
stop_busy

python3 - "$work" "$BUSY" "${kinds[@]}" <<'PY'
import collections, json, os, statistics, sys
work, busy, kinds = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(kind):
    out = []
    for line in open(f"{work}/{kind}-{busy}.runs"):
        rid, rc, wall = line.split()
        p = f"{work}/runs/{rid}/report.json"
        out.append((int(rc), float(wall), json.load(open(p)) if os.path.exists(p) else None))
    return out
for kind in kinds:
    runs = load(kind)
    reps = [rep for _, _, rep in runs if rep]
    verdicts = collections.Counter(s["verdict"] for rep in reps for s in rep["shapes"])
    n = sum(verdicts.values())
    walls = [w for _, w, _ in runs]
    extra = [sum(1 for s in rep["shapes"] for a in s["arms"]
                 if a["round"] >= rep["provenance"]["schedule"]["rounds"]) for rep in reps]
    print(f"== {kind}, {busy} busy loop(s): {len(runs)} runs, {n} shape verdicts: " +
          ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items()) if c))
    print(f"   wall per run: median {statistics.median(walls):.1f} s, "
          f"range {min(walls):.1f} .. {max(walls):.1f} s; extra arms per run: "
          f"median {statistics.median(extra) if extra else 0}, max {max(extra, default=0)}")
    codes = collections.Counter(rc for rc, _, _ in runs)
    print("   exit codes: " + ", ".join(f"{c} x{k}" for c, k in sorted(codes.items())))
    heads = collections.Counter(rep["summary"]["geomean_verdict"] for rep in reps)
    print("   geomean verdicts: " + ", ".join(f"{v} {c}" for v, c in sorted(heads.items())))
    if kind == "demo":
        per_run = [sum(s["verdict"] == "faster" for s in rep["shapes"]) for rep in reps]
        print(f"   runs with all 4 shapes faster: {sum(k == 4 for k in per_run)} of {len(runs)}"
              f" (faster shapes per run: {' '.join(map(str, per_run))})")
    if kind == "regression":
        print(f"   --fail-on-regression exit 5: {codes[5]} of {len(runs)}, exit 0: {codes[0]}")
        sp = [s["speedup"] for rep in reps for s in rep["shapes"] if s.get("speedup")]
        if sp:
            print(f"   speedups {min(sp):.2f}x .. {max(sp):.2f}x")
    if kind in ("aa", "numpy"):
        wrong = verdicts["faster"] + verdicts["slower"]
        heads_wrong = heads["faster"] + heads["slower"]
        print(f"   A/A shapes faster or slower: {wrong} of {n}; gate exit 5: {codes[5]} of "
              f"{len(runs)}; geomean headline faster or slower: {heads_wrong} of {len(reps)}")
    drifts = [(s["drift"] - 1) * 100 for rep in reps for s in rep["shapes"] if s.get("drift")]
    if drifts:
        print(f"   drift (last A / first A - 1): median {statistics.median(drifts):+.1f} %, "
              f"range {min(drifts):+.1f} % .. {max(drifts):+.1f} %")
PY
