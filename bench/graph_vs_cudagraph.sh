#!/usr/bin/env bash
# The graph timing against the usual tool: the spin plugin's kernel (1, 5, 20 us) timed by the
# worker with --timing graph and a warm L2 (no buffer sets rotated), three worker processes per
# duration, beside triton.testing.do_bench_cudagraph on the same kernel through the plugin's ABI
# (bench/graph_vs_cudagraph.py). Target: the two medians within 3 %.
#
# usage: bench/graph_vs_cudagraph.sh     (ABH_BIN, ABH_PLUGIN_DIR as for tests/gpu; PY: a python
#        with torch and triton, default /opt/torch/.venv/bin/python3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${ABH_BIN:?set ABH_BIN to the build's bin directory}"
: "${ABH_PLUGIN_DIR:?set ABH_PLUGIN_DIR to the build's plugins directory}"
PY=${PY:-/opt/torch/.venv/bin/python3}
spin_so=$ABH_PLUGIN_DIR/libabh_spin.so
tmp=$(mktemp -d)
"$ABH_BIN/abharness-worker" probe --gpu 0 >"$tmp/env.json"
declare -A abh
for us in 1 5 20; do
  meds=()
  for i in 1 2 3; do
    d=$tmp/g${us}_$i
    mkdir -p "$d"
    python3 "$root/tests/gpu/make_plan.py" "$d" "$spin_so" "$tmp/env.json" \
      "{\"mode\":\"spin\",\"duration_us\":$us}" timing=graph warm_l2=true
    "$ABH_BIN/abharness-worker" run --run-dir "$d" --shape s --arm A1 >"$d/out.txt" 2>"$d/err.txt" ||
      { cat "$d/err.txt"; exit 1; }
    meds+=("$(python3 "$root/tests/gpu/result.py" "$d/results/s/A1.json" median_ns)")
  done
  abh[$us]=$(printf '%s\n' "${meds[@]}" | sort -g | sed -n 2p)
  echo "spin $us us: abharness graph (warm) medians ${meds[*]} ns ($(python3 "$root/tests/gpu/result.py" "$d/results/s/A1.json" cache))"
done
"$PY" "$root/bench/graph_vs_cudagraph.py" "$spin_so" 1 5 20 | tee "$tmp/triton.txt"
echo
printf '%-6s %22s %22s %8s\n' spin "abharness graph (ns)" "do_bench_cudagraph" "diff"
for us in 1 5 20; do
  t=$(sed -n "s/^spin $us us: do_bench_cudagraph median \([0-9]*\) ns.*/\1/p" "$tmp/triton.txt")
  printf '%-6s %22s %22s %7.2f%%\n' "$us us" "${abh[$us]}" "$t" "$(python3 -c "print(100*(${abh[$us]}/$t-1))")"
done
rm -rf "$tmp"
