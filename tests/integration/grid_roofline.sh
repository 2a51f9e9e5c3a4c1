#!/usr/bin/env bash
# `abharness grid` and `abharness roofline` end to end: a model preset becomes a grid that `run`
# accepts, and the roofline of that grid matches a hand calculation. No GPU needed.
source "$ABH_TESTLIB"

expect_rc 0 "$ABH" grid --model llama-3.1-8b --precision bf16,fp8 --micro-batch 2 --seq 4096 --tp 2 -o shapes.json
[ "$(jget shapes.json 'len(j["shapes"])')" = 24 ] || fail "expected 2 x 12 shapes"
# tp=2: qkv out (16 + 2*4) * 128 = 3072, tokens 2 * 4096 = 8192
[ "$(jget shapes.json 'j["shapes"][0]["id"]')" = qkv_fprop_m8192_n3072_k4096_bf16 ] || fail "first id"
[ "$(jget shapes.json 'j["shapes"][13]["params"]["a_type"]')" = e5m2 ] || fail "fp8 dgrad dY is E5M2"
[ "$(jget shapes.json 'j["generated_by"]["tokens"]')" = 8192 ] || fail "generated_by.tokens"
pass "grid from a preset"

expect_rc 0 "$ABH" roofline --grid shapes.json --gpu "NVIDIA H200" --json sol.json
grep -q "fc1_wgrad_m14336_n4096_k8192_fp8" "$T/last.out" || fail "table lacks a shape"
# qkv fprop bf16: 2 * 8192 * 3072 * 4096 FLOP at the measured 790 TFLOP/s
python3 - sol.json <<'PY' || fail "roofline value"
import json, sys
r = json.load(open(sys.argv[1]))["shapes"][0]
want = 2 * 8192 * 3072 * 4096 / 790e12
assert r["bound"] == "compute", r
assert abs(r["sol_s"] - want) / want < 1e-9, (r["sol_s"], want)
PY
pass "roofline on the H200"

expect_rc 2 "$ABH" roofline --grid shapes.json --gpu "NVIDIA H300"
grep -q '"NVIDIA B200"' "$T/last.err" || fail "unknown GPU must list the known ones"
expect_rc 2 "$ABH" roofline --grid shapes.json --gpu "NVIDIA A100-SXM4-80GB"
grep -q "does not run fp8" "$T/last.err" || fail "A100 has no fp8"
expect_rc 2 "$ABH" grid --model no-such-model --seq 128
grep -q "llama-3.1-70b" "$T/last.err" || fail "unknown model must list the presets"
expect_rc 2 "$ABH" grid --model llama-3.1-8b --seq 4096 --tp 16
ABH_DATA_DIR="$T/nowhere" expect_rc 2 "$ABH" grid --list-models
pass "errors name what exists"

expect_rc 0 "$ABH" grid --shape 64x48x32 --shape 16x16x16 --plain -o plain.json
[ "$(jget plain.json 'j["shapes"][0]["params"] == {"m": 64, "n": 48, "k": 32}')" = True ] || fail "plain params"
expect_rc 0 "$ABH" roofline --grid plain.json --gpu "NVIDIA B200" --precision nvfp4
grep -q "launch" "$T/last.out" || fail "tiny shapes are launch-bound"
pass "explicit shapes"
