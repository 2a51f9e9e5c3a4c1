#!/usr/bin/env bash
# Cold L2 really is cold: a read of 16 MiB (fits in the H200's 60 MB L2) is measurably slower with
# the default per-sample flush than with --warm-l2. A flush that silently did nothing would make
# the two equal.
source "$(dirname "$0")/common.bash"
params='{"mode":"read","bytes":16777216}'
# A fixed 300 samples: the stdrel rule would need ~60000 samples of an 8 us kernel for 0.5 s.
fast='stopping=fixed min_samples=300 warmup_iterations=10 warmup_min_s=0'
arm cold libabh_spin.so "$params" timer=cupti $fast
arm warm libabh_spin.so "$params" timer=cupti warm_l2=true $fast
expect_rc cold 0
expect_rc warm 0
c=$(res cold median_ns)
w=$(res warm median_ns)
echo "read 16 MiB: cold ${c} ns, warm ${w} ns, cold/warm $(ratio "$c" "$w")"
python3 - "$TMP/cold/results/s/A1.json" "$TMP/warm/results/s/A1.json" <<'PY' || fail "l2_flushed flags wrong"
import json, sys
c = json.load(open(sys.argv[1]))["measurement"]
w = json.load(open(sys.argv[2]))["measurement"]
assert c["l2_flushed"] and c["l2_flush_bytes"] > 0, c
assert not w["l2_flushed"], w
PY
check "$c >= 1.15 * $w" || fail "cold ($c ns) is not slower than warm ($w ns): the L2 flush does not work"
echo "PASS"
