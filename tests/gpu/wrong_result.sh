#!/usr/bin/env bash
# A plugin whose output does not match its reference fails the arm with exit code 4 and writes no
# result: the read kernel's sum is checked against a deliberately wrong expected value.
source "$(dirname "$0")/common.bash"
arm wrong libabh_spin.so '{"mode":"read","bytes":1048576,"expect_sum":1}' timer=cupti stopping=fixed min_samples=5 warmup_min_s=0
expect_rc wrong 4
grep -q "wrong result" "$TMP/wrong/err.txt" || fail "no 'wrong result' message: $(cat "$TMP/wrong/err.txt")"
[[ ! -e $TMP/wrong/results/s/A1.json ]] || fail "a result file was written for a wrong output"
arm right libabh_spin.so '{"mode":"read","bytes":1048576}' timer=cupti stopping=fixed min_samples=5 warmup_min_s=0
expect_rc right 0
echo "PASS"
