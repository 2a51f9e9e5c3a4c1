# The Triton example end to end on a GPU (docs/python.md): `abharness run` of its two revisions
# under the user's interpreter (ABH_PYTHON, else /opt/torch/.venv/bin/python3, else python3; the
# test skips when that interpreter lacks torch or triton). Proves that every arm is timed with
# CUPTI and sees the Triton kernel, that the candidate's eight tile configurations are tuned as
# tactics and the choice cached, that every result verifies against torch.matmul and records the
# interpreter, that the candidate (grouped order, bigger tiles) is faster on a 4096^3 GEMM, that one
# copy of CUPTI is mapped into each arm, and — with the events timer, which records on the worker's
# stream only — that the Triton kernels ran on the worker's stream (events >= CUPTI kernel time).
source "$(dirname "$0")/common.bash"
torch_python
"$PY" -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
ABH=$ABH_BIN/abharness
[[ -x $ABH ]] || fail "$ABH missing: this test drives the orchestrator"
# A bundle (tools/relocatable.sh) keeps libgit2's own dependencies in lib/ beside bin/ (RUNPATH
# is not inherited by a library's own dependencies).
[[ -d $ABH_BIN/../lib ]] && export LD_LIBRARY_PATH=$ABH_BIN/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
root=$(cd "$GPU_TEST_DIR/../.." && pwd)
cd "$TMP"
"$root/examples/make-demo-repo.sh" triton repo
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m1024_n1024_k1024", "params": { "m": 1024, "n": 1024, "k": 1024 } },
  { "id": "m4096_n4096_k4096", "params": { "m": 4096, "n": 4096, "k": 4096 } } ] }
JSON
start=$(date +%s.%N)
rc=0
# The planned arms only (--until-decided 0): the checks below count arms A1, B, A2; extra
# blocks are tested on the CPU (tests/integration/verdicts.sh).
"$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --target triton --python "$PY" \
  --grid grid.json --runs-root runs --run-id t --max-time 2 --until-decided 0 --color never \
  >run.out 2>run.err || rc=$?
echo "run: exit $rc in $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
cat run.out
tail -20 run.err
[[ $rc == 0 ]] || { cat runs/t/logs/*/*.err 2>/dev/null | tail -60; fail "abharness run exited $rc"; }

python3 - runs/t <<'PY'
import glob, json, statistics, sys
run = sys.argv[1]
plan = json.load(open(run + "/plan.json"))
dists = [d.split("==")[0] for d in plan["python"]["distributions"]]
assert "torch" in dists and "triton" in dists, dists
rows = {}
for f in sorted(glob.glob(run + "/results/*/*.json")):
    r = json.load(open(f))
    m, inv = r["measurement"], r["invocation"]
    assert m["timer"] == "cupti", (f, m["timer"])
    assert any("matmul_kernel" in k for k in m["kernel_names"]), (f, m["kernel_names"])
    assert r["correctness"]["passed"], f
    assert r["python"]["distributions_sha256"] == plan["python"]["distributions_sha256"], f
    assert m["l2_flushed"] and len(m["clock"]["sample_mhz"]) == len(m["samples_ns"]), f
    how = m["tactic_choice"]
    if inv["variant"] == "baseline":
        assert how == "only tactic", (f, how)
    else:
        assert how.startswith("tuned over 8 candidates") or how.startswith("cache hit"), (f, how)
    rows[(inv["shape"], inv["arm"])] = m
    print(f"{inv['shape']:20} {inv['arm']:3} ready {m['ready_s']:.2f} s  median "
          f"{statistics.median(m['samples_ns'])/1e3:9.1f} us  {m['tactic'][:60]} ({how[:40]})")
assert len(rows) == 6, rows.keys()
rep = json.load(open(run + "/report.json"))
verdicts = {s["shape"]: s["verdict"] for s in rep["shapes"]}
print("verdicts:", verdicts)
assert verdicts["m4096_n4096_k4096"] == "faster", verdicts
PY
libs=$(grep -h "CUDA libraries mapped" runs/t/logs/*/A1.out | head -1) || true
[[ -n $libs ]] || fail "no arm named the CUDA libraries mapped into it"
echo "$libs"
! grep -q "copies of CUPTI" runs/t/logs/*/*.out || fail "two copies of CUPTI in an arm: $(grep -h 'copies of CUPTI' runs/t/logs/*/*.out | head -1)"
echo "PASS: Triton example: CUPTI, tuned tactics, verified, candidate faster on 4096^3"

# The events timer records on the worker's stream: Triton kernels launched anywhere else would
# leave it reading only the launch gap. An A/A of the baseline at 1024^3 with events.
cat >one.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m1024_n1024_k1024", "params": { "m": 1024, "n": 1024, "k": 1024 } } ] }
JSON
rc=0
"$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD~1 --target triton --python "$PY" \
  --grid one.json --runs-root runs --run-id ev --timer events --max-time 1 --quiet --color never \
  >ev.out 2>ev.err || rc=$?
[[ $rc == 0 ]] || { tail -20 ev.err; fail "events run exited $rc"; }
python3 - runs/t runs/ev <<'PY'
import json, statistics, sys
cupti = statistics.median(json.load(open(sys.argv[1] + "/results/m1024_n1024_k1024/A1.json"))["measurement"]["samples_ns"])
events = statistics.median(json.load(open(sys.argv[2] + "/results/m1024_n1024_k1024/A1.json"))["measurement"]["samples_ns"])
print(f"1024^3 baseline: CUPTI kernel time {cupti/1e3:.1f} us, events {events/1e3:.1f} us "
      f"(events/CUPTI {events/cupti:.3f}: launch latency and Python between launches)")
assert events >= 0.9 * cupti, "events read less than the kernel time: the kernels ran on another stream"
PY
echo "PASS: Triton kernels run on the worker's stream (events >= CUPTI)"
