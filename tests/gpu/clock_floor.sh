#!/usr/bin/env bash
# The clock floor (worker/clock_guard.hpp): with it on (the default), every kept sample carries
# the SM clock it ran at, read by stamps around it, within a plausible range of the GPU's peak,
# and the global timer's resolution is recorded; with --clock-floor 0 they are still clocked.
# A bf16 8192^3 GEMM run long enough to reach the power cap shows what the floor discards.
source "$(dirname "$0")/common.bash"
arm on libabh_spin.so '{"mode":"spin","duration_us":200}'
expect_rc on 0
arm off libabh_spin.so '{"mode":"spin","duration_us":200}' clock_floor=0
expect_rc off 0
arm gemm libabh_cublaslt_gemm.so '{"m":8192,"n":8192,"k":8192,"precision":"bf16"}' \
  min_time_s=2 max_time_s=2 max_noise=0.0001
expect_rc gemm 0
for a in on off gemm; do echo "$a: $(res $a clock)"; done
echo "gemm: median $(res gemm median_ns) ns; $(res gemm telemetry)"
python3 - "$TMP" <<'PY' || fail "clock readings"
import json, statistics, sys
tmp = sys.argv[1]
load = lambda a: json.load(open(f"{tmp}/{a}/results/s/A1.json"))["measurement"]
on, off, gemm = load("on"), load("off"), load("gemm")
c = on["clock"]
assert c["peak_mhz"] > 0, c
assert 0 < c["timer_resolution_ns"] <= 2000, c
assert c["floor_mhz"] == round(0.5 * c["peak_mhz"]), c
assert len(c["sample_mhz"]) == len(on["samples_ns"]), "one clock per kept sample"
# A 200 us spin of one thread draws little power: it runs at (about) the peak clock.
med = statistics.median(c["sample_mhz"])
assert 0.95 * c["peak_mhz"] <= med <= 1.02 * c["peak_mhz"], (med, c["peak_mhz"])
assert all(0.3 * c["peak_mhz"] < x < 1.1 * c["peak_mhz"] for x in c["sample_mhz"])
assert off["clock"]["floor_mhz"] == 0, off["clock"]
assert len(off["clock"]["sample_mhz"]) == len(off["samples_ns"]), "clocked with the floor off too"
g = gemm["clock"]
assert len(g["sample_mhz"]) == len(gemm["samples_ns"])
# Kept samples ran at the floor or above (within one timer tick of the reading).
assert min(g["sample_mhz"]) >= g["floor_mhz"] * 0.97, min(g["sample_mhz"])
print(f"spin: {len(c['sample_mhz'])} samples at median {med:.0f} MHz (peak {c['peak_mhz']}, "
      f"timer tick {c['timer_resolution_ns']:.0f} ns); gemm: {len(gemm['samples_ns'])} kept, "
      f"{g['rejected']} discarded, {g['recovery_s']:.2f} s of pauses")
PY
echo "PASS"
