# A Python module that touches the GPU when it is imported, under workers started ahead
# (docs/method.md, "Starting the next arm ahead"): such a worker would create its CUDA context
# while the arm before it measures. Proves that the worker refuses before its turn, naming the
# context and the fix, instead of running beside the measured arm; being the first worker of its
# variant, its refusal refuses the whole run before any arm. Uses the Triton example's repository (skips without torch and triton).
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
# The first worker of each variant must have loaded before the run's first turn (it is the dry run
# of a GPU Python plugin's import): the candidate's refuses there, so the run is refused before any
# arm, with the worker's account and the fix, and leaves no run directory.
[[ $rc == 2 ]] || { tail -20 run.err; fail "a run whose candidate touches the GPU at import exited $rc, not 2"; }
grep -q "the candidate Python plugin .* failed in its first worker, before its turn" run.err ||
  fail "the refusal names no plugin: $(cat run.err)"
grep -q "already created a CUDA context before it (the primary context of device 0 is active)" run.err ||
  fail "refusal: $(cat run.err)"
grep -q "or run with --start-ahead 0" run.err || fail "the fix is not named: $(cat run.err)"
[[ ! -e runs/c ]] || fail "a run directory was left for a run refused before any arm"
echo "candidate refused: $(grep -m1 "failed in its first worker" run.err | cut -c1-200)"
echo "PASS: a module that creates a CUDA context at import is refused before the first turn"
