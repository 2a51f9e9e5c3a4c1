#!/usr/bin/env bash
# The three timings on a real GPU (docs/method.md, "Three timings"), with the spin kernel, whose
# duration is known in advance:
#   graph   a replay of captured iterations reads each spin (1, 5, 20 us) within 1 % + 0.3 us of
#           the kernel's own time, and never below the spin's duration, cold (buffer sets rotated
#           inside the graph, recorded as such) and warm. The kernel's own time is CUPTI's in the
#           kernel timing: the duration plus the ~0.7 us a kernel takes to start and retire on the
#           H200 (spin_timers.sh checks it against 100 us and 1 ms spins); an iteration
#           of several kernels reads no less than the sum of its kernels timed alike, one kernel
#           per replayed iteration (kernel timing's medians are printed beside it: on an H100
#           CUPTI reads a kernel launched alone 65-94 ns longer than inside a graph, on the H200
#           64-128 ns shorter: the two time a kernel differently, so only a graph-timed sum
#           bounds a graph iteration);
#           a problem that does not declare it can be captured is refused, with no result;
#   launch  reads at least the kernel time, and the host work on top of it stays small for a
#           C++ plugin (< 200 us here);
#   kernel  with buffer sets offered, rotation replaces the flush; without, the flush is used.
source "$(dirname "$0")/common.bash"
fast='stopping=fixed min_samples=200 warmup_iterations=3 warmup_min_s=0'
spin() { echo "{\"mode\":\"spin\",\"duration_us\":$1${2:+,$2}}"; }

for us in 1 5 20; do
  arm graph_$us libabh_spin.so "$(spin $us)" timing=graph $fast
  expect_rc graph_$us 0
  arm graphwarm_$us libabh_spin.so "$(spin $us)" timing=graph warm_l2=true $fast
  expect_rc graphwarm_$us 0
  arm kernel_$us libabh_spin.so "$(spin $us)" timing=kernel $fast
  expect_rc kernel_$us 0
done
for us in 1 5 20; do
  g=$(res graph_$us median_ns) w=$(res graphwarm_$us median_ns) k=$(res kernel_$us median_ns)
  want=$((us * 1000))
  echo "spin ${us} us: graph cold ${g} ns, graph warm ${w} ns, kernel ${k} ns ($(res graph_$us count) graph samples; $(res graph_$us cache))"
  for v in "$g" "$w"; do
    check "abs($v - $k) <= 0.01 * $k + 300" || fail "graph timing read $v ns for a spin whose kernel takes $k ns (> 1 % + 0.3 us off)"
    check "$v >= $want" || fail "graph timing read $v ns for a $want ns spin: below its duration"
  done
  [[ $(res graph_$us timer) == graph ]] || fail "graph_$us: timer $(res graph_$us timer), not graph"
  res graph_$us cache | grep -q '^rotation ' || fail "graph_$us: cache preparation '$(res graph_$us cache)', not a rotation"
  [[ $(res graphwarm_$us cache) == warm ]] || fail "graphwarm_$us: cache preparation '$(res graphwarm_$us cache)', not warm"
  res kernel_$us cache | grep -q '^rotation ' || fail "kernel_$us: buffer sets offered, but '$(res kernel_$us cache)'"
done

# An iteration of four 5 us kernels: graph time (first start to last end) >= the kernels' sum,
# each timed as it runs there, in a replayed graph (graphwarm_5: one kernel per iteration).
arm multi_graph libabh_spin.so "$(spin 5 '"kernels":4')" timing=graph warm_l2=true $fast
expect_rc multi_graph 0
arm multi_kernel libabh_spin.so "$(spin 5 '"kernels":4')" timing=kernel warm_l2=true $fast
expect_rc multi_kernel 0
mg=$(res multi_graph median_ns) mk=$(res multi_kernel median_ns) one=$(res graphwarm_5 median_ns)
sum=$(python3 -c "print(4 * $one)")
echo "4 x 5 us: graph ${mg} ns, sum of 4 kernels in a graph ${sum} ns (gaps $(python3 -c "print($mg-$sum)") ns), kernel timing's sum ${mk} ns ($(python3 -c "print($mg-$mk)") ns)"
check "$mg >= $sum" || fail "graph time $mg ns below the sum of its kernels $sum ns (4 x $one ns in a graph)"
[[ $(res multi_graph kernels | tr '|' '\n' | grep -c spin) == 4 ]] || fail "graph iteration kernels: $(res multi_graph kernels)"

# Launch timing: the kernel plus the host's launch and synchronisation.
arm launch_20 libabh_spin.so "$(spin 20)" timing=launch $fast
expect_rc launch_20 0
l=$(res launch_20 median_ns) k=$(res kernel_20 median_ns)
echo "spin 20 us: launch ${l} ns, kernel ${k} ns (host $(python3 -c "print($l-$k)") ns)"
[[ $(res launch_20 timer) == launch ]] || fail "launch_20: timer $(res launch_20 timer)"
check "$l >= $k" || fail "launch timing $l ns below the kernel's $k ns"
check "$l <= $k + 200000" || fail "launch timing $l ns: more than 200 us above the kernel's $k ns"

# Fail closed: graph timing of a problem that does not declare it can be captured.
arm nocap libabh_spin.so "$(spin 5 '"capturable":false')" timing=graph $fast
expect_rc nocap 5
grep -q "does not declare that its problem can be captured" "$TMP/nocap/err.txt" ||
  fail "unclear refusal: $(cat "$TMP/nocap/err.txt")"
[[ ! -e $TMP/nocap/results/s/A1.json ]] || fail "a result was written for a refused graph timing"
# Graph timing, cold, without buffer sets: refused (the L2 cannot be flushed inside a replay).
arm nosets libabh_spin.so "$(spin 5 '"buffer_sets":false')" timing=graph $fast
expect_rc nosets 5
grep -q "offers no buffer sets" "$TMP/nosets/err.txt" || fail "unclear refusal: $(cat "$TMP/nosets/err.txt")"
# Kernel timing without buffer sets: the flush, recorded.
arm flush_5 libabh_spin.so "$(spin 5 '"buffer_sets":false')" timing=kernel $fast
expect_rc flush_5 0
res flush_5 cache | grep -q '^flush-' || fail "flush_5: cache preparation '$(res flush_5 cache)'"

# cuBLASLt decode GEMM (several kernels with split-K) in all three timings.
gemm='{"m":16,"n":4096,"k":4096,"precision":"bf16"}'
for t in kernel graph launch; do
  arm gemm_$t libabh_cublaslt_gemm.so "$gemm" timing=$t $fast
  expect_rc gemm_$t 0
done
echo "cublaslt m16 n4096 k4096: kernel $(res gemm_kernel median_ns) ns, graph $(res gemm_graph median_ns) ns, launch $(res gemm_launch median_ns) ns; kernels [$(res gemm_graph kernels)]; $(res gemm_graph cache)"
check "$(res gemm_graph median_ns) >= 0.9 * $(res gemm_kernel median_ns)" || fail "graph GEMM far below its kernel time"
check "$(res gemm_launch median_ns) >= $(res gemm_kernel median_ns)" || fail "launch GEMM below its kernel time"
echo "PASS"
