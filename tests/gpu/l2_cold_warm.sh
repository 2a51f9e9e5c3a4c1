#!/usr/bin/env bash
# Cold L2 really is cold: a read of 16 MiB (fits in the H200's 60 MB L2) is measurably slower cold
# than with --warm-l2, both ways the worker makes it cold — the per-sample flush (a problem
# without buffer sets) and the rotation of buffer sets (a problem that offers them). A flush or a
# rotation that silently did nothing would make cold and warm equal.
source "$(dirname "$0")/common.bash"
params='{"mode":"read","bytes":16777216}'
nosets='{"mode":"read","bytes":16777216,"buffer_sets":false}'
# A fixed 300 samples: the stdrel rule would need ~60000 samples of an 8 us kernel for 0.5 s.
fast='stopping=fixed min_samples=300 warmup_iterations=10 warmup_min_s=0'
arm cold libabh_spin.so "$nosets" timer=cupti $fast
arm rotated libabh_spin.so "$params" timer=cupti $fast
arm warm libabh_spin.so "$params" timer=cupti warm_l2=true $fast
expect_rc cold 0
expect_rc rotated 0
expect_rc warm 0
c=$(res cold median_ns) r=$(res rotated median_ns) w=$(res warm median_ns)
echo "read 16 MiB: flushed ${c} ns, rotated ${r} ns, warm ${w} ns, flushed/warm $(ratio "$c" "$w"), rotated/warm $(ratio "$r" "$w") ($(res rotated cache))"
python3 - "$TMP/cold/results/s/A1.json" "$TMP/rotated/results/s/A1.json" "$TMP/warm/results/s/A1.json" <<'PY' || fail "cache preparation recorded wrong"
import json, sys
c, r, w = (json.load(open(f))["measurement"] for f in sys.argv[1:4])
assert c["l2_flushed"] and c["l2_flush_bytes"] > 0 and c["cache_preparation"].startswith("flush-"), c
assert not r["l2_flushed"] and r["cache_preparation"].startswith("rotation "), r
assert not w["l2_flushed"] and w["cache_preparation"] == "warm", w
PY
check "$c >= 1.15 * $w" || fail "flushed ($c ns) is not slower than warm ($w ns): the L2 flush does not work"
check "$r >= 1.15 * $w" || fail "rotated ($r ns) is not slower than warm ($w ns): the buffer sets do not rotate"
echo "PASS"
