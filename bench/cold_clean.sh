#!/usr/bin/env bash
# Cold and clean: is a cold-L2 sample of a memory-bound kernel charged for anything but its own
# traffic? The spin plugin's read kernel (sums BYTES of words) at 8, 16, 32 and 64 MiB, timed by
# the worker in the kernel timing two ways — buffer sets rotated (nothing flushed) and the flush
# (a write of twice the L2 before each sample, which leaves dirty lines) — against Nsight Compute's
# gpu__time_duration of the same kernel with --cache-control all (caches flushed and invalidated
# before each kernel) and --clock-control none. Target: the worker's cold time within 2 % of ncu's.
#
# usage: ABH_BIN=<bin> ABH_PLUGIN_DIR=<plugins> bench/cold_clean.sh   (a GPU machine with ncu)
source "$(dirname "$0")/../tests/gpu/common.bash"
W=$WORKER
fast='stopping=fixed min_samples=300 warmup_iterations=5 warmup_min_s=0'
rows=()
for mb in 8 16 32 64; do
  bytes=$((mb << 20))
  arm rot_$mb libabh_spin.so "{\"mode\":\"read\",\"bytes\":$bytes}" $fast
  arm flush_$mb libabh_spin.so "{\"mode\":\"read\",\"bytes\":$bytes,\"buffer_sets\":false}" $fast
  expect_rc rot_$mb 0
  expect_rc flush_$mb 0
  d="$TMP/ncu_$mb"
  mkdir -p "$d"
  python3 "$GPU_TEST_DIR/make_plan.py" "$d" "$ABH_PLUGIN_DIR/libabh_spin.so" "$TMP/env.json" \
    "{\"mode\":\"read\",\"bytes\":$bytes,\"buffer_sets\":false}" timer=events warm_l2=true \
    stopping=fixed min_samples=30 warmup_iterations=2 warmup_min_s=0
  timeout 300 ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv \
    --print-units base -k regex:read "$W" run --run-dir "$d" --shape s --arm A1 >"$d/ncu.csv" 2>"$d/ncu.err" ||
    { tail -5 "$d/ncu.err"; fail "ncu run at $mb MiB"; }
  n=$(python3 - "$d/ncu.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
head = rows[0]
v = [float(r[-1].replace(",", "")) for r in rows[1:]
     if r[head.index("Metric Name")] == "gpu__time_duration.sum"]
print(statistics.median(v[2:]) if len(v) > 4 else "nan")
PY
)
  r=$(res rot_$mb median_ns) f=$(res flush_$mb median_ns)
  rows+=("$(printf '%3d MiB  ncu %9.0f ns  rotation %9.0f ns (%+.1f %%)  flush %9.0f ns (%+.1f %%)  [%s | %s]' \
    "$mb" "$n" "$r" "$(python3 -c "print(100*($r/$n-1))")" "$f" "$(python3 -c "print(100*($f/$n-1))")" \
    "$(res rot_$mb cache)" "$(res flush_$mb cache)")")
done
printf '%s\n' "" "cold and clean (kernel timing vs ncu --cache-control all):" "${rows[@]}"
