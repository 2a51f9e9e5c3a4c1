#!/usr/bin/env bash
# Proves the worker's GPU measurement on a real GPU, in one go (for a leased machine): builds the
# worker and the CUDA plugins there (or uses a bundle from tools/relocatable.sh in .carry/bundle
# when the build cannot be configured there), runs tests/gpu/*.sh, then measures a bf16 8192^3
# GEMM through the worker (CUPTI, events) and independently (Nsight Compute on the same kernel,
# PyTorch on its own cuBLAS call), plus fp8 variants. Logs go to $OUT (default /tmp/gpu-prove);
# a summary table is printed last.
#
# usage: tools/gpu_prove.sh [tests]    (from the repository root; "tests": the tests only)
#        BUNDLE=<dir>: use that bundle's worker and plugins, building nothing here
set -uo pipefail
OUT=${OUT:-/tmp/gpu-prove}
mkdir -p "$OUT/arms"
exec > >(tee -a "$OUT/prove.log") 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary=()
note() { summary+=("$*"); echo "== $*"; }

date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
nvcc --version | tail -2

t0=$(date +%s.%N)
BUILD=build-h200
if [ -n "${BUNDLE:-}" ]; then
  BIN=$BUNDLE/bin PLUG=$BUNDLE/lib/abharness
  note "build: none, the bundle $BUNDLE"
elif cmake -S . -B "$BUILD" -DABH_WITH_GIT=OFF -DBUILD_TESTING=OFF >"$OUT/cmake.log" 2>&1 &&
  cmake --build "$BUILD" -j"$(nproc)" --target abharness-worker abh_spin abh_cublaslt_gemm \
    abh_cpu_gemm >>"$OUT/cmake.log" 2>&1; then
  BIN=$PWD/$BUILD/bin PLUG=$PWD/$BUILD/plugins
  note "build: built here in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s"
else
  tail -30 "$OUT/cmake.log"
  BIN=$PWD/.carry/bundle/bin PLUG=$PWD/.carry/bundle/lib/abharness
  note "build: FAILED here (cmake.log), using the carried bundle"
fi
W=$BIN/abharness-worker

for t in tests/gpu/*.sh; do
  name=$(basename "$t" .sh)
  s=$(date +%s.%N)
  ABH_BIN=$BIN ABH_PLUGIN_DIR=$PLUG ABH_GPU_OUT=$OUT/arms timeout 240 bash "$t" >"$OUT/test_$name.log" 2>&1
  rc=$?
  cat "$OUT/test_$name.log"
  note "test $name: rc=$rc ($(python3 -c "print(round($(date +%s.%N) - $s, 1))") s) $(grep -E '^(spin|read|worker wall|bf16|fp8|blk)' "$OUT/test_$name.log" | tr '\n' ';' | cut -c1-600)"
done

if [[ ${1:-} == tests ]]; then
  tar -czf "$OUT/arms.tar.gz" -C "$OUT" arms && rm -rf "$OUT/arms"
  printf '%s\n' "" "================ summary ================" "${summary[@]}"
  exit 0
fi

# --- 8192^3 bf16: worker (CUPTI, cold L2) vs Nsight Compute on the same kernel vs PyTorch --------
G=$OUT/arms/gemm
mkdir -p "$G"
"$W" probe --gpu 0 >"$G/env.json"
plan() { python3 tests/gpu/make_plan.py "$G/$1" "$PLUG/libabh_cublaslt_gemm.so" "$G/env.json" "$2" "${@:3}"; }
runarm() { "$W" run --run-dir "$G/$1" --shape s --arm A1 >"$G/$1.out" 2>"$G/$1.err"; echo $?; }
field() { python3 tests/gpu/result.py "$G/$1/results/s/A1.json" "$2" 2>/dev/null; }
P8192='{"m":8192,"n":8192,"k":8192,"precision":"bf16"}'
# Tune once, then compare short runs (50 samples, ~0.1 s of GEMMs) of the same tactic: long
# back-to-back runs hit the H200's power cap (SM clock 1980 -> ~1485 MHz), which would make the
# comparison one of GPU states, not of timers.
plan tune "$P8192" timer=cupti stopping=fixed min_samples=10 warmup_iterations=2 warmup_min_s=0
rc=$(runarm tune)
cat "$G/tune.out" "$G/tune.err"
key=$(field tune tactic)
short='stopping=fixed min_samples=50 warmup_iterations=5 warmup_min_s=0'
for arm in cupti1 events ncu cupti2; do
  sleep 3
  if [[ $arm == ncu ]]; then
    plan ncu "$P8192" timer=events "tactic=$key" stopping=fixed min_samples=20 warmup_iterations=2 warmup_min_s=0
    timeout 300 ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv \
      --print-units base --print-kernel-base mangled "$W" run --run-dir "$G/ncu" --shape s --arm A1 \
      >"$G/ncu.csv" 2>"$G/ncu.err"
    echo "ncu rc=$?"
    tail -3 "$G/ncu.err"
    python3 - "$G/ncu.csv" "$G/tune/results/s/A1.json" <<'PY' | tee "$G/ncu.txt"
import csv, json, statistics, sys
names = set(json.load(open(sys.argv[2]))["measurement"]["kernel_names"])
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
per = {}
for r in csv.DictReader(rows):
    if r.get("Metric Name") == "gpu__time_duration.sum":
        per.setdefault(r["Kernel Name"], []).append(float(r["Metric Value"].replace(",", "")))
for n, v in per.items():
    tag = "MATCH" if n in names else "other"
    print(f"ncu {tag}: {n[:100]}: median {statistics.median(v):.0f} ns x{len(v)} (min {min(v):.0f})")
PY
    note "bf16 8192^3 ncu (same kernel, --clock-control none --cache-control all): $(grep MATCH "$G/ncu.txt" | tr '\n' ';')"
  else
    timer=cupti
    [[ $arm == events ]] && timer=events
    plan "$arm" "$P8192" timer=$timer "tactic=$key" $short
    rc=$(runarm "$arm")
    note "bf16 8192^3 worker $arm: rc=$rc median $(field "$arm" median_ns) ns, n=$(field "$arm" count), kernels $(field "$arm" kernels), throttled $(field "$arm" throttled)"
    field "$arm" telemetry
  fi
done
sleep 3
PYTHONUNBUFFERED=1 timeout 120 python3 tools/torch_gemm_ref.py 8192 8192 8192 50 >"$G/torch.txt" 2>&1
cat "$G/torch.txt"
note "bf16 8192^3 torch (its own kernel choice): $(grep -E 'median|TFLOP' "$G/torch.txt" | tr '\n' ';' | cut -c1-500)"
ls /usr/lib/x86_64-linux-gnu/ | grep -i boost | head
tar -czf "$OUT/arms.tar.gz" -C "$OUT" arms && rm -rf "$OUT/arms"
echo
echo "================ summary ================"
printf '%s\n' "${summary[@]}"
