#!/usr/bin/env bash
# Arm-to-arm repeatability on a GPU: measures one shape REPS times, each in a fresh worker process
# back to back (as a sweep's A1/B/A2 are), under each settings variant given, and prints each
# variant's medians, their spread (max/min - 1, the worst drift an A/A pair could show), the
# samples kept and discarded by the clock floor, and wall time per arm. Runs the worker directly
# (no orchestrator, no git), so it works from a relocatable bundle on a machine without libgit2.
#
# usage: bench/arm_repeat.sh PARAMS_JSON REPS VARIANT...
#   VARIANT: comma-separated setting=value pairs for tests/gpu/make_plan.py, or "default"
#   e.g. bench/arm_repeat.sh '{"m":4096,"n":19968,"k":6656,"precision":"bf16"}' 5 \
#          clock_floor=0 clock_floor=0.97
#   BIN (abharness-worker) and PLUG (plugins) default to build/bin and build/plugins.
#   BETWEEN=PARAMS_JSON: a worker of that other shape runs (unreported) before each rep, as a
#   sweep's A1 follows another shape's A2, where by default each rep follows its own shape.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
PLUG=${PLUG:-$root/build/plugins}
params=$1 reps=$2
shift 2
nvidia-smi -L >/dev/null 2>&1 || { echo "arm_repeat: no GPU here" >&2; exit 77; }
work=${WORK:-$(mktemp -d /tmp/abh-repeat.XXXXXX)}
mkdir -p "$work"
"$BIN/abharness-worker" probe --gpu 0 >"$work/env.json"
for variant in "$@"; do
  settings=()
  [[ $variant == default ]] || IFS=, read -r -a settings <<<"$variant"
  vdir=$work/$(echo "$variant" | tr -c 'A-Za-z0-9._=\n-' '_')
  for ((i = 1; i <= reps; i++)); do
    d=$vdir/rep$i
    rm -rf "$d" && mkdir -p "$d"
    python3 "$root/tests/gpu/make_plan.py" "$d" "$PLUG/libabh_cublaslt_gemm.so" "$work/env.json" \
      "$params" ${settings[@]+"${settings[@]}"}
    # Later reps reuse the first rep's tuned tactic, as the arms of one sweep do.
    [[ $i == 1 ]] || cp "$vdir/rep1/tactics.json" "$d/" 2>/dev/null || true
    if [[ -n ${BETWEEN:-} ]]; then
      rm -rf "$d.between" && mkdir -p "$d.between"
      python3 "$root/tests/gpu/make_plan.py" "$d.between" "$PLUG/libabh_cublaslt_gemm.so" \
        "$work/env.json" "$BETWEEN"
      "$BIN/abharness-worker" run --run-dir "$d.between" --shape s \
        --arm A1 >/dev/null 2>&1 || echo "between rep $i failed"
    fi
    s=$(date +%s.%N)
    "$BIN/abharness-worker" run --run-dir "$d" --shape s --arm A1 >"$d/out.txt" 2>"$d/err.txt" ||
      { echo "$variant rep $i failed:"; tail -3 "$d/err.txt"; }
    python3 -c "print($(date +%s.%N) - $s)" >"$d/wall"
  done
  python3 - "$vdir" "$variant" "$reps" <<'PY'
import json, statistics, sys
vdir, variant, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
meds, kept, rej, pause, walls, noise, mhz, reasons = [], [], [], [], [], [], [], []
per_set = []
for i in range(1, reps + 1):
    try:
        r = json.load(open(f"{vdir}/rep{i}/results/s/A1.json"))
    except OSError:
        continue
    m = r["measurement"]
    meds.append(statistics.median(m["samples_ns"]))
    kept.append(len(m["samples_ns"]))
    rej.append(m["clock"]["rejected"]); pause.append(m["clock"]["recovery_s"])
    noise.append(m["noise"] * 100)
    mhz.append(statistics.median(m["clock"]["sample_mhz"]) if m["clock"]["sample_mhz"] else 0)
    walls.append(float(open(f"{vdir}/rep{i}/wall").read()))
    reasons.append(m["stop_reason"])
    prep = m.get("cache_preparation", "")
    nsets = int(prep.split()[1]) if prep.startswith("rotation ") else 1
    xs = m["samples_ns"]
    per_set.append([statistics.median(xs[j::nsets]) for j in range(nsets)] if nsets > 1 else [])
if not meds:
    print(f"{variant}: no result"); sys.exit(0)
spread = (max(meds) / min(meds) - 1) * 100
print(f"== {variant}: {len(meds)}/{reps} arms, spread of medians {spread:.2f} %")
for i, x in enumerate(meds):
    print(f"   rep {i+1}: median {x/1e3:10.2f} us, noise {noise[i]:.2f} %, kept {kept[i]}, "
          f"discarded {rej[i]}, pauses {pause[i]:.2f} s, clock {mhz[i]:.0f} MHz, wall {walls[i]:.2f} s"
          f" | {reasons[i][:60]}")
    if per_set[i]:
        print("      per set (us): " + " ".join(f"{v/1e3:.2f}" for v in per_set[i]))
PY
done
