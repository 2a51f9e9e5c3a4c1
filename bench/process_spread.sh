#!/usr/bin/env bash
# How far apart fresh processes of one Python kernel read, arm by arm, on a GPU: a run of N
# identical variants (one revision, no build or run settings) of the RMSNorm example over small
# shapes, so that each shape gets N+1 arms, each a fresh worker process, in one interleaved run;
# under each configuration given (an environment for the workers, e.g. another PyTorch allocator).
# Prints per shape every arm's judged median, its interval, its median SM clock, the medians of
# its first and second half of samples (a process that moved during its arm shows there), the
# spread of the arms' medians (max/min - 1) and their sigma (the standard deviation of their logs,
# what bench/arm_spread_verdicts.py turns into verdicts), then per configuration the median and
# worst of both.
# That spread is what one A1/A2 pair can read as drift: a spread far above the arms' own intervals
# comes from the process, and no count of samples inside one arm removes it.
#
# usage: OUT=/tmp/spread BIN=.carry/bundle/bin [PY=/opt/torch/.venv/bin/python3] [REVISION=HEAD~1]
#        [VARIANTS=6] [ROWS="1 4 16 64"] [HIDDEN="4096 8192"] bench/process_spread.sh CONFIG...
#   CONFIG: a name, then optionally ":VAR=value,VAR=value" set in the workers' environment, e.g.
#           default  expandable:PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
#   REVISION: HEAD~1 is the example's eager PyTorch baseline (nine kernels at one row), HEAD its
#   Triton kernel (one). Extra abharness run flags: ARGS="--timing graph".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
OUT=${OUT:-/tmp/process_spread}
PY=${PY:-/opt/torch/.venv/bin/python3}
REVISION=${REVISION:-HEAD~1} VARIANTS=${VARIANTS:-6}
ROWS=${ROWS:-1 4 16 64} HIDDEN=${HIDDEN:-4096 8192}
[[ $# -gt 0 ]] || set -- default
nvidia-smi -L >/dev/null 2>&1 || { echo "process_spread: no GPU here"; exit 77; }
[[ -d $BIN/../lib ]] && export LD_LIBRARY_PATH=$BIN/../lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$OUT" && cd "$OUT" && rm -rf repo runs
"$root/examples/make-demo-repo.sh" rmsnorm repo >/dev/null
ROWS=$ROWS HIDDEN=$HIDDEN python3 - >grid.json <<'PY'
import json, os
print(json.dumps({"schema_version": 1, "shapes": [
    {"id": f"r{r}_h{h}", "params": {"rows": int(r), "hidden": int(h)}}
    for h in os.environ["HIDDEN"].split() for r in os.environ["ROWS"].split()]}))
PY
REVISION=$REVISION VARIANTS=$VARIANTS python3 - >variants.json <<'PY'
import json, os
n = int(os.environ["VARIANTS"])
print(json.dumps({"schema_version": 1, "baseline": "v1", "variants": [
    {"name": f"v{i}", "revision": os.environ["REVISION"]} for i in range(1, n + 1)]}))
PY
summary=()
for config in "$@"; do
  name=${config%%:*} envs=()
  [[ $config == *:* ]] && IFS=, read -r -a envs <<<"${config#*:}"
  s=$(date +%s.%N)
  env ${envs[@]+"${envs[@]}"} "$BIN/abharness" run --repo repo --variants variants.json \
    --target rmsnorm --python "$PY" --grid grid.json --runs-root runs --run-id "$name" \
    --color never --until-decided 0 ${ARGS:-} >"$name.out" 2>"$name.err"
  rc=$?
  wall=$(python3 -c "print(round($(date +%s.%N) - $s, 1))")
  python3 - "runs/$name" <<'PY' | tee "$name.spread.txt"
import glob, json, math, os, statistics, sys
run = sys.argv[1]
spreads, sigmas = [], []
for shape_dir in sorted(glob.glob(run + "/results/*")):
    arms = []
    for path in glob.glob(shape_dir + "/*.json"):
        m = json.load(open(path))["measurement"]
        xs, stop = m["samples_ns"], m.get("stop") or {}
        median = stop.get("median_ns") or statistics.median(xs)
        mhz = m["clock"].get("sample_mhz") or [0]
        h = len(xs) // 2
        arms.append((os.path.basename(path)[:-5], median,
                     100 * stop.get("interval", {}).get("half_width", float("nan")),
                     statistics.median(mhz), len(xs), statistics.median(xs[:h] or xs),
                     statistics.median(xs[h:])))
    if not arms:
        continue
    medians = [a[1] for a in arms]
    spreads.append(100 * (max(medians) / min(medians) - 1))
    # sigma: the standard deviation of the log medians, what bench/arm_spread_verdicts.py takes.
    sigmas.append(100 * statistics.stdev([math.log(x) for x in medians]) if len(arms) > 1 else 0)
    print(f"{os.path.basename(shape_dir)}: spread {spreads[-1]:.2f} %, sigma {sigmas[-1]:.2f} % "
          f"over {len(arms)} arms")
    for a in sorted(arms, key=lambda a: a[1]):
        print(f"  {a[0]:>6} {a[1]:10.1f} ns +-{a[2]:.3f} %  {a[3]:5.0f} MHz  {a[4]:6d} samples"
              f"  halves {a[5]:.1f} / {a[6]:.1f}")
if spreads:
    print(f"spread of the arms' medians: median {statistics.median(spreads):.2f} %, "
          f"worst {max(spreads):.2f} %; sigma median {statistics.median(sigmas):.2f} %, "
          f"worst {max(sigmas):.2f} % over {len(spreads)} shapes")
PY
  summary+=("$name (${envs[*]:-as given}): exit $rc, wall $wall s, $(tail -1 "$name.spread.txt")")
done
printf '%s\n' "" "================ process spread (revision $REVISION, $VARIANTS variants) ================" "${summary[@]}"
