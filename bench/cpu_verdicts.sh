#!/usr/bin/env bash
# How often do verdicts and the CI gate lie on a loaded CPU machine? Runs, on the CPU example with
# two busy loops beside it:
#   - RUNS A/A sweeps (HEAD against HEAD) of a 4-shape grid with --fail-on-regression, and prints
#     how many shape verdicts came out faster or slower (target: at most 5 % of them at the
#     default band) and every run's exit code (target: never 5);
#   - RUNS regression sweeps (the naive kernel as candidate, --baseline HEAD --candidate HEAD~1, a
#     ~1.8x regression) with --fail-on-regression, and every run's exit code (target: never 0);
#   - the drift (A2 / A1) of the first shape of every run (the first-arm effect).
# It prints numbers; it is not a timed unit test. Wall time is about 3-5 minutes on 2 cores with
# the default settings below.
#
# usage: bench/cpu_verdicts.sh        BIN=<dir with abharness> (default build/bin)
#        RUNS=10 (runs per kind), SCHEDULE="--schedule aba" (extra schedule flags),
#        ABH_FLAGS (extra flags for every run), BUSY=2 (busy loops), WORK=<dir> (kept afterwards)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
RUNS=${RUNS:-10}
BUSY=${BUSY:-2}
work=${WORK:-$(mktemp -d /tmp/abh-verdicts.XXXXXX)}
mkdir -p "$work"
cd "$work"
[ -d repo ] || "$root/examples/make-demo-repo.sh" cpu repo >/dev/null
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m32_n32_k32", "params": { "m": 32, "n": 32, "k": 32 } },
  { "id": "m48_n48_k48", "params": { "m": 48, "n": 48, "k": 48 } },
  { "id": "m64_n64_k64", "params": { "m": 64, "n": 64, "k": 64 } },
  { "id": "m96_n64_k80", "params": { "m": 96, "n": 64, "k": 80 } } ] }
JSON
# The integration tests' fast settings (tests/lib.sh FAST).
FAST=(--min-samples 5 --min-time 0.01 --max-time 0.2 --warmup 1)

busy_pids=()
stop_busy() { for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_busy EXIT
for ((i = 0; i < BUSY; i++)); do
  sh -c 'while :; do :; done' &
  busy_pids+=($!)
done
echo "== $BUSY busy loop(s): ${busy_pids[*]}; abharness: $BIN/abharness; work directory $work"

# run_kind KIND BASELINE CANDIDATE: RUNS sweeps, their exit codes into $work/KIND.rc
run_kind() {
  local kind=$1 base=$2 cand=$3
  : >"$work/$kind.rc"
  for ((r = 1; r <= RUNS; r++)); do
    set +e
    # shellcheck disable=SC2086
    "$BIN/abharness" run --repo repo --baseline "$base" --candidate "$cand" --grid grid.json \
      --runs-root runs --run-id "$kind-$r" "${FAST[@]}" ${SCHEDULE:-} ${ABH_FLAGS:-} \
      --fail-on-regression --quiet 2>"$work/$kind-$r.err"
    echo $? >>"$work/$kind.rc"
    set -e
  done
}
t0=$(date +%s)
run_kind aa HEAD HEAD
run_kind regression HEAD HEAD~1
t1=$(date +%s)
stop_busy

python3 - "$work" "$RUNS" "$((t1 - t0))" <<'PY'
import collections, json, os, statistics, sys
work, runs, wall = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def reports(kind):
    out = []
    for r in range(1, runs + 1):
        p = f"{work}/runs/{kind}-{r}/report.json"
        out.append(json.load(open(p)) if os.path.exists(p) else None)
    return out
def rcs(kind):
    return [int(x) for x in open(f"{work}/{kind}.rc").read().split()]
for kind, target in (("aa", "never 5"), ("regression", "never 0")):
    reps, codes = reports(kind), rcs(kind)
    verdicts = collections.Counter(s["verdict"] for rep in reps if rep for s in rep["shapes"])
    n = sum(verdicts.values())
    print(f"== {kind}: {runs} runs x 4 shapes, {n} shape verdicts: " +
          ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items())))
    if kind == "aa":
        wrong = verdicts["faster"] + verdicts["slower"]
        print(f"   A/A faster or slower: {wrong} of {n} = {100 * wrong / max(n, 1):.1f} % "
              f"(target <= 5 %)")
    print(f"   exit codes with --fail-on-regression ({target}): {' '.join(map(str, codes))}")
    drifts = [rep["shapes"][0].get("drift") for rep in reps if rep]
    drifts = [(d - 1) * 100 for d in drifts if d]
    if drifts:
        print(f"   first shape's drift (A2/A1 - 1): median {statistics.median(drifts):+.1f} %, "
              f"range {min(drifts):+.1f} % .. {max(drifts):+.1f} %, "
              f"|drift| > 1 % in {sum(abs(d) > 1 for d in drifts)} of {len(drifts)} runs")
    if kind == "regression":
        sp = [s["speedup"] for rep in reps if rep for s in rep["shapes"] if s.get("speedup")]
        if sp:
            print(f"   speedups {min(sp):.2f}x .. {max(sp):.2f}x")
print(f"== wall time of the sweeps: {wall} s")
PY
