#!/usr/bin/env bash
# What an arm's stopping rule costs on the CPU: samples per arm and wall time of
#   - demo: the README demo's run (scripts/demo.sh: the CPU example's naive baseline HEAD~1
#     against its blocked candidate HEAD over examples/cpu-gemm/shapes.json, --max-time 2), and
#   - aa: an A/A (HEAD against HEAD) of two sub-microsecond shapes of the CPU example (m2 n2 k2
#     and m4 n4 k4), with the defaults,
# ROUNDS times each, alternating, for every binary directory given (e.g. the build before a
# change and after it), so a machine that gets busier over the call weighs on all alike. Prints one
# line per run (wall, samples per arm: median / min / max, stop causes, verdicts) and, per binary
# and kind, the medians over the rounds. It prints numbers; it is not a test.
#
# usage: bench/cpu_stopping.sh BIN_DIR [BIN_DIR ...]    ROUNDS=3, WORK=<dir> (kept afterwards),
#        ABH_FLAGS (extra flags for every run)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/cpu_stopping.sh BIN_DIR [BIN_DIR ...]" >&2; exit 2; }
rounds=${ROUNDS:-3}
work=${WORK:-$(mktemp -d /tmp/abh-stopping.XXXXXX)}
mkdir -p "$work"
cd "$work"
[ -d repo ] || "$root/examples/make-demo-repo.sh" cpu repo >/dev/null
cat >aa_grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m2_n2_k2", "params": { "m": 2, "n": 2, "k": 2 } },
  { "id": "m4_n4_k4", "params": { "m": 4, "n": 4, "k": 4 } } ] }
JSON

runs=()
for r in $(seq 1 "$rounds"); do
  for b in $(seq 1 $#); do
    bin=${!b}
    for kind in demo aa; do
      id=${kind}_bin${b}_r$r
      rm -rf "runs/$id"
      if [ $kind = demo ]; then
        args=(--baseline HEAD~1 --candidate HEAD --grid "$root/examples/cpu-gemm/shapes.json"
          --max-time 2)
      else
        args=(--baseline HEAD --candidate HEAD --grid aa_grid.json)
      fi
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$bin/abharness" run --repo repo --target cpu --runs-root runs --run-id "$id" --quiet \
        --color never "${args[@]}" ${ABH_FLAGS:-} >"$id.out" 2>"$id.err" || true
      t1=$(date +%s.%N)
      echo "$t0 $t1" >"$id.time"
      runs+=("$id")
    done
  done
done

python3 - "$work" "${runs[@]}" <<'PY'
import glob, json, re, statistics, sys
work, runs = sys.argv[1], sys.argv[2:]
summary = {}
print(f"{'run':16} {'wall':>7} {'samples/arm med':>16} {'min':>7} {'max':>7}  stop causes; verdicts")
for run in runs:
    t0, t1 = map(float, open(f"{work}/{run}.time").read().split())
    rs = [json.load(open(f)) for f in glob.glob(f"{work}/runs/{run}/results/*/*.json")]
    if not rs:
        print(f"{run:16} no results: {open(f'{work}/{run}.err').read()[-300:]}")
        continue
    n = [len(r["measurement"]["samples_ns"]) for r in rs]
    causes = {}
    for r in rs:
        stop = r["measurement"].get("stop")
        c = stop["cause"] if stop else re.sub(r"[ (].*", "", r["measurement"]["stop_reason"])
        causes[c] = causes.get(c, 0) + 1
    try:
        rep = json.load(open(f"{work}/runs/{run}/report.json"))
        verdicts = {s["shape"]: s["verdict"] for s in rep["shapes"]}
    except OSError:
        verdicts = {}
    print(f"{run:16} {t1 - t0:6.1f}s {statistics.median(n):16.0f} {min(n):7d} {max(n):7d}  {causes}; {verdicts}")
    kind, b = run.split("_")[0], run.split("_")[1]
    summary.setdefault((kind, b), []).append((t1 - t0, statistics.median(n)))
print("\nmedians over rounds:")
for (kind, b), rows in sorted(summary.items()):
    print(f"  {kind:5} {b:5} wall {statistics.median(w for w, _ in rows):6.1f} s, "
          f"samples per arm {statistics.median(s for _, s in rows):8.0f}  ({len(rows)} rounds)")
PY
echo "work directory: $work"
