#!/usr/bin/env bash
# Cold and clean: is a cold-L2 sample of a memory-bound kernel charged for anything but its own
# traffic? At 8, 16, 32 and 64 MiB, in the kernel timing:
#   - the copy plugin (kernels/copy: reads and writes each byte once, no buffer sets) under each L2
#     flush method (ABH_L2_FLUSH: memset, read, memset-read, memset-discard);
#   - the spin plugin's read kernel with its buffer sets rotated (nothing flushed);
# each against Nsight Compute's gpu__time_duration of the same kernel with --cache-control all
# (caches flushed and invalidated before each kernel) and --clock-control none.
# Target: the worker's cold time within 2 % of ncu's. (Nsight Compute adds about a microsecond to
# kernels this short; docs/measurements.md has the numbers.)
#
# usage: ABH_BIN=<bin> ABH_PLUGIN_DIR=<plugins> bench/cold_clean.sh   (a GPU machine with ncu)
source "$(dirname "$0")/../tests/gpu/common.bash"
fast='stopping=fixed min_samples=300 warmup_iterations=5 warmup_min_s=0'
methods="memset read memset-read memset-discard"
ncu_median() {  # NAME PLUGIN PARAMS KERNEL_REGEX: ncu's median gpu__time_duration, ns
  local d="$TMP/$1"
  mkdir -p "$d"
  python3 "$GPU_TEST_DIR/make_plan.py" "$d" "$ABH_PLUGIN_DIR/$2" "$TMP/env.json" "$3" timer=events \
    warm_l2=true stopping=fixed min_samples=30 warmup_iterations=2 warmup_min_s=0
  timeout 300 ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv \
    --print-units base -k "regex:$4" "$WORKER" run --run-dir "$d" --shape s --arm A1 >"$d/ncu.csv" 2>"$d/ncu.err" ||
    { tail -5 "$d/ncu.err" >&2; echo nan; return; }
  python3 - "$d/ncu.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
head = rows[0]
v = [float(r[-1].replace(",", "")) for r in rows[1:]
     if r[head.index("Metric Name")] == "gpu__time_duration.sum"]
print(statistics.median(v[2:]) if len(v) > 4 else "nan")
PY
}
pct() { python3 -c "print('%+.1f %%' % (100 * ($1 / $2 - 1)))"; }
rows=()
for mb in 8 16 32 64; do
  bytes=$((mb << 20))
  copy="{\"bytes\":$bytes}" read="{\"mode\":\"read\",\"bytes\":$bytes}"
  line=$(printf '%3d MiB copy:' "$mb")
  nc=$(ncu_median ncu_copy_$mb libabh_copy.so "$copy" copy)
  line+=$(printf ' ncu %6.0f ns' "$nc")
  for m in $methods; do
    ABH_L2_FLUSH=$m arm copy_${m}_$mb libabh_copy.so "$copy" $fast
    expect_rc copy_${m}_$mb 0
    v=$(res copy_${m}_$mb median_ns)
    line+=" | $m $(printf '%.0f' "$v") ($(pct "$v" "$nc"))"
  done
  rows+=("$line")
  nr=$(ncu_median ncu_read_$mb libabh_spin.so "$read" read)
  arm rot_$mb libabh_spin.so "$read" $fast
  expect_rc rot_$mb 0
  r=$(res rot_$mb median_ns)
  rows+=("$(printf '%3d MiB read: ncu %6.0f ns | rotation %.0f (%s) [%s]' "$mb" "$nr" "$r" "$(pct "$r" "$nr")" "$(res rot_$mb cache)")")
done
printf '%s\n' "" "cold and clean (kernel timing vs ncu --cache-control all):" "${rows[@]}"
