#!/usr/bin/env bash
# The worker refuses to report samples whose kernels differ between iterations (a plugin that
# switches tactics mid-measurement), and says why. The CUPTI timer checks within one measure()
# call, the worker across its sampling batches; whichever sees the change first must stop the arm.
source "$(dirname "$0")/common.bash"
fast='stopping=fixed min_samples=30 warmup_iterations=0 warmup_min_s=0'
arm alt libabh_spin.so '{"mode":"spin","duration_us":20,"alternate_kernels":true}' timer=cupti $fast
expect_rc alt 3
grep -qE "differ from those of iteration 0|set of kernels changed between sampling batches" \
  "$TMP/alt/err.txt" || fail "unclear message: $(cat "$TMP/alt/err.txt")"
[[ ! -e $TMP/alt/results/s/A1.json ]] || fail "a result was written despite a changing kernel set"
arm same libabh_spin.so '{"mode":"spin","duration_us":20}' timer=cupti $fast
expect_rc same 0
echo "PASS"
