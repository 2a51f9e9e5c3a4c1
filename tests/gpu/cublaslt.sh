#!/usr/bin/env bash
# The cuBLASLt plugin through the worker: every precision this GPU supports verifies against the
# fp64 reference; split-K shapes sum all their kernels; Blackwell-only formats are refused naming
# the GPU; a foreign or damaged tactic key is refused; a tuned tactic is reused from the cache.
source "$(dirname "$0")/common.bash"
gpu=$(python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpu"]; print(g["name"], g["cc_major"])' "$TMP/env.json")
cc=${gpu##* }
fast='stopping=fixed min_samples=5 warmup_iterations=1 warmup_min_s=0'
run_ok() {  # NAME PARAMS
  arm "$1" libabh_cublaslt_gemm.so "$2" $fast
  expect_rc "$1" 0
  echo "$1: $(res "$1" median_ns) ns, error $(res "$1" error) <= $(res "$1" tol), kernels: $(res "$1" kernels)"
  res "$1" tactic | grep -q '^cublasLt[0-9]*:[0-9a-f]\{128\}$' || fail "$1: bad tactic key $(res "$1" tactic)"
}
run_ok bf16 '{"m":1024,"n":1024,"k":1024,"precision":"bf16"}'
run_ok bf16_m1 '{"m":1,"n":6656,"k":19968,"precision":"bf16"}'
run_ok bf16_odd '{"m":100,"n":300,"k":200,"precision":"bf16"}'
# Every bf16 layout (docs/grids.md: letter 0 stores B, letter 1 stores A) verifies against the fp64
# reference, which reads each operand where that layout stores it; odd sizes catch a wrong stride.
for L in NN NT TT; do
  run_ok "bf16_$L" "{\"m\":1024,\"n\":512,\"k\":768,\"precision\":\"bf16\",\"layout\":\"$L\"}"
  run_ok "bf16_${L}_odd" "{\"m\":100,\"n\":300,\"k\":200,\"precision\":\"bf16\",\"layout\":\"$L\"}"
done
# A model grid's bf16 dgrad shape as `abharness grid --model` writes it runs as it says.
run_ok bf16_model_dgrad '{"m":8192,"n":4096,"k":1024,"precision":"bf16","layout":"NN","a_type":"bf16","b_type":"bf16","d_type":"bf16","a_scale":"none","b_scale":"none"}'
# What the plugin does not run is refused by name, never substituted.
refused() {  # NAME RC TEXT PARAMS
  arm "$1" libabh_cublaslt_gemm.so "$4" $fast
  expect_rc "$1" "$2"
  grep -qF "$3" "$TMP/$1/err.txt" || fail "$1: message lacks '$3': $(cat "$TMP/$1/err.txt")"
  echo "$1 refused: $(cat "$TMP/$1/err.txt")"
}
refused fp8_nn 5 'layout "NN" with precision "fp8"' '{"m":256,"n":256,"k":256,"precision":"fp8","layout":"NN"}'
refused bad_layout 3 "param 'layout' must be" '{"m":256,"n":256,"k":256,"layout":"XY"}'
refused unknown_key 3 "unknown param 'transpose'" '{"m":256,"n":256,"k":256,"transpose":true}'
refused d_type 5 "param 'd_type' is" '{"m":256,"n":256,"k":256,"d_type":"fp32"}'
refused scale 5 "param 'b_scale' is" '{"m":256,"n":256,"k":256,"precision":"fp8","b_scale":"blk128x128_32f"}'
if ((cc >= 9)); then
  run_ok fp8 '{"m":2048,"n":2048,"k":2048,"precision":"fp8"}'
  run_ok fp8_e5m2 '{"m":2048,"n":2048,"k":2048,"precision":"fp8","b_type":"e5m2"}'
fi
if ((cc == 9)); then
  run_ok blk1x128 '{"m":2048,"n":2048,"k":2048,"precision":"fp8_block_1x128"}'
  run_ok blk128x128 '{"m":2048,"n":2048,"k":2048,"precision":"fp8_block_128x128"}'
fi
if ((cc < 10)); then
  for p in mxfp8 nvfp4; do
    arm "$p" libabh_cublaslt_gemm.so "{\"m\":1024,\"n\":1024,\"k\":1024,\"precision\":\"$p\"}" $fast
    expect_rc "$p" 5
    grep -q "Blackwell" "$TMP/$p/err.txt" || fail "$p: message does not say Blackwell"
    grep -qF "${gpu% *}" "$TMP/$p/err.txt" || fail "$p: message does not name the GPU"
    echo "$p refused: $(cat "$TMP/$p/err.txt")"
  done
fi
arm e5e5 libabh_cublaslt_gemm.so '{"m":256,"n":256,"k":256,"precision":"fp8","a_type":"e5m2","b_type":"e5m2"}' $fast
expect_rc e5e5 5
# Tactic keys: a foreign key and a key for another cuBLASLt version are refused with a reason.
arm foreign libabh_cublaslt_gemm.so '{"m":256,"n":256,"k":256}' $fast tactic=cpu-blocked-v1
[[ $(rc_of foreign) != 0 ]] || fail "a foreign tactic key was accepted"
grep -q "not a cuBLASLt tactic key" "$TMP/foreign/err.txt" || fail "foreign key: $(cat "$TMP/foreign/err.txt")"
key=$(res bf16 tactic)
arm oldver libabh_cublaslt_gemm.so '{"m":1024,"n":1024,"k":1024}' $fast "tactic=cublasLt1:${key#*:}"
[[ $(rc_of oldver) != 0 ]] || fail "a key of another cuBLASLt version was accepted"
grep -q "valid for one cuBLASLt version" "$TMP/oldver/err.txt" || fail "version: $(cat "$TMP/oldver/err.txt")"
arm exact libabh_cublaslt_gemm.so '{"m":1024,"n":1024,"k":1024}' $fast "tactic=$key"
expect_rc exact 0
[[ $(res exact tactic) == "$key" ]] || fail "requested tactic not used"
# The tuned choice is cached per variant; a second worker on the same run directory reuses it.
arm bf16 libabh_cublaslt_gemm.so '{"m":1024,"n":1024,"k":1024,"precision":"bf16"}' $fast
expect_rc bf16 0
grep -q "cache hit" "$TMP/bf16/out.txt" || fail "second run did not hit the tactic cache: $(cat "$TMP/bf16/out.txt")"
echo "PASS"
