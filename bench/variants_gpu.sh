#!/usr/bin/env bash
# Several variants in one run, on the GPU (docs/variants.md), over the 16-shape bf16 reference grid
# of the cuBLASLt plugin:
#   aa   a two-variant A/A (--baseline HEAD --candidate HEAD): the cost per arm to compare with;
#   aaa  an A/A/A (three identical variants in one variants file): every comparison should be
#        `same`, worst drift within 0.1 %, the cost per arm unchanged against aa;
#   tvd  the tuned path (--tactic auto: every heuristic candidate timed, the fastest kept) as the
#        baseline against the default path (run setting tactic=default: cuBLASLt's heuristic's
#        first choice, untuned) as the candidate: the shapes where the untuned path is slower, by
#        how much, and whether the two chose the same algorithm.
# Prints a table per run and a summary line each; the run directories stay under WORK.
#
# usage: BIN=<dir with abharness> [WORK=dir] bench/variants_gpu.sh [aa] [aaa] [tvd]
#        SHAPES_M="1 8" narrows the grid's M values; extra flags for every run in ABH_FLAGS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
runs_wanted=("$@")
[ ${#runs_wanted[@]} -gt 0 ] || runs_wanted=(aa aaa tvd)
nvidia-smi -L >/dev/null 2>&1 || { echo "variants_gpu: no GPU here (nvidia-smi -L failed)" >&2; exit 77; }
work=${WORK:-$(mktemp -d /tmp/abh-variants.XXXXXX)}
mkdir -p "$work"
[[ -d $BIN/../lib ]] && export LD_LIBRARY_PATH=$BIN/../lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

source "$root/bench/kernel_repo.sh"
repo=$work/repo
kernel_repo "$repo"
grid=$work/grid.json
python3 - ${SHAPES_M:-1 8 32 128 512 1024 2048 4096} >"$grid" <<'PY'
import json, sys
shapes = [{"id": f"m{m}_n{n}_k{k}_bf16", "params": {"m": m, "n": n, "k": k, "precision": "bf16"}}
          for n, k in ((6656, 19968), (19968, 6656)) for m in map(int, sys.argv[1:])]
print(json.dumps({"schema_version": 1, "shapes": shapes}, indent=1))
PY
cat >"$work/aaa.json" <<'JSON'
{ "schema_version": 1, "baseline": "a",
  "variants": [ { "name": "a", "revision": "HEAD" }, { "name": "b", "revision": "HEAD" },
                { "name": "c", "revision": "HEAD" } ] }
JSON
cat >"$work/tvd.json" <<'JSON'
{ "schema_version": 1, "baseline": "tuned",
  "variants": [ { "name": "tuned", "revision": "HEAD" },
                { "name": "default", "revision": "HEAD", "run": { "tactic": "default" } } ] }
JSON

sweep() {  # sweep NAME ARGS...
  local name=$1 rc=0 t0 t1
  shift
  rm -rf "$work/runs/$name"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$BIN/abharness" run --repo "$repo" --target cuda --grid "$grid" --runs-root "$work/runs" \
    --run-id "$name" --color never "$@" ${ABH_FLAGS:-} >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  t1=$(date +%s.%N)
  echo "== $name: exit $rc, wall $(python3 -c "print(f'{$t1-$t0:.1f}')") s"
  [ $rc -eq 0 ] || tail -5 "$work/$name.err"
  python3 - "$work/runs/$name" <<'PY'
import glob, json, sys
run = sys.argv[1]
rep = json.load(open(run + "/report.json"))
reports = ([(c["name"], c["report"]) for c in rep["candidates"]] if rep.get("kind") == "variants"
           else [("candidate", rep)])
results = [json.load(open(f)) for f in glob.glob(run + "/results/*/*.json")]
tactic = {}
for r in results:
    inv, m = r["invocation"], r["measurement"]
    tactic.setdefault((inv["shape"], inv["variant"]), set()).add(m.get("tactic", ""))
print(f"{len(results)} arms; level {rep.get('comparison_confidence', rep.get('stats', {}).get('confidence', ''))}")
worst, counts = 0.0, {}
for name, r in reports:
    for s in r["shapes"]:
        d, sp, ci = s.get("drift"), s.get("speedup"), s.get("ci") or {}
        if d: worst = max(worst, abs(d - 1))
        counts[s["verdict"]] = counts.get(s["verdict"], 0) + 1
        base = rep.get("baseline", "baseline")
        same_algo = tactic.get((s["shape"], base)) == tactic.get((s["shape"], name))
        print(f"  {name:8} {s['shape']:26} {sp or float('nan'):7.4f} "
              f"[{ci.get('lo', float('nan')):.4f}, {ci.get('hi', float('nan')):.4f}] "
              f"drift {((d or 1) - 1) * 100:+6.3f}%  {s['verdict']:9} "
              f"{'same algorithm' if same_algo else 'other algorithm'}")
    g = r["summary"]
    print(f"  {name}: geomean {g['geomean']:.4f} [{g['geomean_ci']['lo']:.4f}, {g['geomean_ci']['hi']:.4f}]")
print(f"  verdicts {counts}; worst |drift| {worst * 100:.3f}%")
PY
}
for r in "${runs_wanted[@]}"; do
  case $r in
    aa) sweep aa --baseline HEAD --candidate HEAD ;;
    aaa) sweep aaa --variants "$work/aaa.json" ;;
    tvd) sweep tvd --variants "$work/tvd.json" ;;
    *) echo "variants_gpu: unknown run '$r' (aa, aaa, tvd)" >&2; exit 2 ;;
  esac
done
echo "work directory: $work"
