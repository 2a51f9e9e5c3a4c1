# A Python module that touches the GPU when it is imported, under workers started ahead
# (docs/method.md, "Starting the next arm ahead"): such a worker would create its CUDA context
# while the arm before it measures. Proves that the worker refuses before its turn, naming the
# context and the fix, instead of running beside the measured arm; the arms of the well-behaved
# revision still measure. Uses the Triton example's repository (skips without torch and triton).
source "$(dirname "$0")/common.bash"
torch_python
ABH=$ABH_BIN/abharness
[[ -x $ABH ]] || fail "$ABH missing: this test drives the orchestrator"
[[ -d $ABH_BIN/../lib ]] && export LD_LIBRARY_PATH=$ABH_BIN/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
root=$(cd "$GPU_TEST_DIR/../.." && pwd)
cd "$TMP"
"$root/examples/make-demo-repo.sh" triton repo >/dev/null
# A third revision: the candidate's module allocates on the GPU at import time.
printf '\nimport torch as _torch\n_at_import = _torch.zeros(1, device="cuda")\n' >>repo/bench/kernel.py
git -C repo -c user.name=t -c user.email=t@t.invalid commit -q -am "touches the GPU when imported"
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m1024", "params": { "m": 1024, "n": 1024, "k": 1024 } } ] }
JSON
rc=0
"$ABH" run --repo repo --baseline HEAD~2 --candidate HEAD --target triton --python "$PY" \
  --grid grid.json --runs-root runs --run-id c --start-ahead 1 --max-time 0.5 --color never \
  >run.out 2>run.err || rc=$?
[[ $rc != 0 ]] || fail "a run whose candidate touches the GPU at import exited 0"
# The candidate's arm is B, or B1 when the plan holds extra blocks (--until-decided).
f=$(ls runs/c/logs/m1024/B*.failure.json 2>/dev/null | head -1)
[[ -n $f && -f $f ]] || { tail -20 run.err; fail "no failure record for the candidate's arm"; }
grep -q "already created a CUDA context before it (the primary context of device 0 is active)" "$f" ||
  fail "failure reason: $(cat "$f")"
grep -q "or run with --start-ahead 0" "$f" || fail "the fix is not named: $(cat "$f")"
for a in A1 A2; do
  [[ -f runs/c/results/m1024/$a.json ]] || fail "the baseline's arm $a did not measure"
done
echo "candidate refused: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['reason'][:160])" "$f")"
echo "PASS: a module that creates a CUDA context at import is refused before its turn"
