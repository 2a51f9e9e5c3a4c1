#!/usr/bin/env bash
# Decode shapes through the cuBLASLt plugin: small M with deep K makes cuBLASLt split K and round
# the partial sums to bf16, so the error exceeds the output rounding alone. Every M of a decode
# batch at K = 4096 and 16384 must verify against the fp64 reference within the K-dependent
# tolerance (docs/gpu.md, "Correctness and tolerance"), which the result must carry. Every shape
# runs before the test fails, so one run lists all failures with their split-K and reduction.
source "$(dirname "$0")/common.bash"
fast='stopping=fixed min_samples=10 warmup_iterations=0 warmup_min_s=0'
bad=()
for k in 4096 16384; do
  want=$(python3 -c 'import sys; k=int(sys.argv[1]); print(4/256 + 3*k**0.5/2**24)' "$k")
  for m in 1 2 4 8 16 32 64; do
    name="m${m}_k${k}"
    arm "$name" libabh_cublaslt_gemm.so "{\"m\":$m,\"n\":4096,\"k\":$k,\"precision\":\"bf16\"}" $fast
    if [[ $(rc_of "$name") != 0 ]]; then
      echo "$name: exit $(rc_of "$name"): $(cat "$TMP/$name/err.txt")"
      bad+=("$name")
      continue
    fi
    tol=$(res "$name" tol)
    if ! check "abs($tol - $want) <= 1e-9 * $want"; then
      echo "$name: tolerance $tol, want gemm_tolerance(bf16, $k) = $want"
      bad+=("$name")
    fi
    echo "$name: error $(res "$name" error) <= $tol, $(res "$name" method), kernels: $(res "$name" kernels)"
  done
done
((${#bad[@]} == 0)) || fail "${#bad[@]} decode shapes failed: ${bad[*]}"
echo "PASS"
