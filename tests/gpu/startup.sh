#!/usr/bin/env bash
# GPU selection by index and by UUID describe the same GPU, and a worker enqueues its first timed
# iteration within 0.5 s of being started (median of three fresh processes, measured on the
# monotonic clock from just before exec to the worker's trace of its first iteration).
source "$(dirname "$0")/common.bash"
uuid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpu"]["uuid"])' "$TMP/env.json")
[[ $uuid == GPU-* ]] || fail "probe gave no GPU UUID: $uuid"
"$WORKER" probe --gpu "$uuid" >"$TMP/env_uuid.json"
cmp -s "$TMP/env.json" "$TMP/env_uuid.json" || fail "probe by index and by UUID differ"
rc=0; "$WORKER" probe --gpu GPU-00000000-0000-0000-0000-000000000000 >/dev/null 2>"$TMP/bad.txt" || rc=$?
[[ $rc != 0 ]] || fail "an unknown UUID was accepted"
grep -q "no CUDA device has UUID" "$TMP/bad.txt" || fail "unclear message: $(cat "$TMP/bad.txt")"
# Start-up to first sample: the test records CLOCK_MONOTONIC just before exec'ing the worker;
# the worker (ABH_STARTUP_TRACE=1) prints the same clock when it enqueues its first timed iteration.
# The worker sees only its GPU, as the orchestrator starts it (orchestrator/sweep.cpp): on a 2-GPU
# machine the driver's start-up otherwise costs ~0.2 s more.
lat=()
for i in 1 2 3; do
  d="$TMP/start$i"
  mkdir -p "$d"
  python3 "$GPU_TEST_DIR/make_plan.py" "$d" "$ABH_PLUGIN_DIR/libabh_spin.so" "$TMP/env.json" \
    '{"mode":"spin","duration_us":10}' stopping=fixed min_samples=1 warmup_iterations=0 \
    warmup_min_s=0 min_time_s=0
  rc=0
  CUDA_VISIBLE_DEVICES=$uuid ABH_STARTUP_TRACE=1 python3 -c '
import os, sys, time
open(sys.argv[1], "w").write(str(time.monotonic_ns()))
os.execv(sys.argv[2], sys.argv[2:])' "$d/t0" "$WORKER" run --run-dir "$d" --shape s --arm A1 \
    >"$d/out.txt" 2>"$d/err.txt" || rc=$?
  [[ $rc == 0 ]] || { cat "$d/err.txt"; fail "start$i: worker exit code $rc"; }
  t1=$(sed -n 's/^abh-startup: first timed iteration at monotonic_ns=//p' "$d/err.txt")
  [[ -n $t1 ]] || fail "start$i: no start-up trace in $(cat "$d/err.txt")"
  lat+=("$(python3 -c "print(($t1 - $(cat "$d/t0")) / 1e9)")")
done
echo "worker start-up to first timed sample, three runs: ${lat[*]} s"
med=$(printf '%s\n' "${lat[@]}" | sort -g | sed -n 2p)
check "$med < 0.5" || fail "median start-up to first sample $med s >= 0.5 s"
echo "PASS"
