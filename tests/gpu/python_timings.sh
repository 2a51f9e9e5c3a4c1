#!/usr/bin/env bash
# The three timings of a Python plugin, end to end (docs/method.md, "Three timings"): an A/B/A of
# the RMSNorm example (eager PyTorch against one Triton kernel) with --timing kernel,graph,launch.
# Proves that each shape becomes one row per timing with its own arms, that the graph timing
# captures eager PyTorch through torch's allocator and rotates buffer sets (recorded), that the
# launch timing includes the host's launcher work (above the kernel timing, more so for the eager
# baseline of nine launches at one row), that every arm verifies, and that report.json aggregates
# per timing only.
source "$(dirname "$0")/common.bash"
torch_python
ABH=$ABH_BIN/abharness
[[ -x $ABH ]] || fail "$ABH missing: this test drives the orchestrator"
[[ -d $ABH_BIN/../lib ]] && export LD_LIBRARY_PATH=$ABH_BIN/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
root=$(cd "$GPU_TEST_DIR/../.." && pwd)
cd "$TMP"
"$root/examples/make-demo-repo.sh" rmsnorm repo
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "r1_h4096", "params": { "rows": 1, "hidden": 4096 } },
  { "id": "r4096_h4096", "params": { "rows": 4096, "hidden": 4096 } } ] }
JSON
start=$(date +%s.%N)
rc=0
# The planned arms only (--until-decided 0): the checks below count arms A1, B, A2; extra
# blocks are tested on the CPU (tests/integration/verdicts.sh).
"$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --target rmsnorm --python "$PY" \
  --grid grid.json --runs-root runs --run-id t --timing kernel,graph,launch --max-time 2 \
  --until-decided 0 --color never >run.out 2>run.err || rc=$?
echo "run: exit $rc in $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
cat run.out
tail -20 run.err
[[ $rc == 0 ]] || { tail -n 40 runs/t/logs/*/*.err 2>/dev/null | tail -120; fail "abharness run exited $rc"; }

python3 - runs/t <<'PY'
import glob, json, statistics, sys
run = sys.argv[1]
med = {}
for f in sorted(glob.glob(run + "/results/*/*.json")):
    r = json.load(open(f))
    m, inv = r["measurement"], r["invocation"]
    shape, timing = inv["shape"].split("@")
    assert inv["settings"]["timing"] == timing, (f, inv["settings"]["timing"])
    assert m["timer"] == {"kernel": "cupti", "graph": "graph", "launch": "launch"}[timing], (f, m["timer"])
    assert r["correctness"]["passed"], f
    assert m["cache_preparation"].startswith("rotation "), (f, m["cache_preparation"])
    med[(shape, timing, inv["arm"])] = statistics.median(m["samples_ns"])
    print(f"{inv['shape']:22} {inv['arm']:3} {len(m['samples_ns']):7} samples  median "
          f"{med[(shape, timing, inv['arm'])]/1e3:9.2f} us  ready {m['ready_s']:.2f} s  "
          f"{m['cache_preparation']}  [{len(m['kernel_names'])} kernels]")
assert len(med) == 2 * 3 * 3, sorted(med)
for shape in ("r1_h4096", "r4096_h4096"):
    for arm in ("A1", "B", "A2"):
        k, g, l = (med[(shape, t, arm)] for t in ("kernel", "graph", "launch"))
        assert l > k, (shape, arm, "launch below kernel", l, k)
        assert g >= 0.9 * k, (shape, arm, "graph far below kernel", g, k)
# One row of eight eager launches: the launcher's host work dominates the launch timing.
assert med[("r1_h4096", "launch", "A1")] > 3 * med[("r1_h4096", "kernel", "A1")], med
rep = json.load(open(run + "/report.json"))
timings = sorted({s["timing"] for s in rep["shapes"]})
assert timings == ["graph", "kernel", "launch"], timings
assert [t["timing"] for t in rep["by_timing"]] == ["kernel", "graph", "launch"], rep["by_timing"]
assert rep["summary"]["geomean"] is None, "a geomean over rows of three timings"
for t in rep["by_timing"]:
    print(t["timing"], "geomean", t["summary"]["geomean"], t["summary"]["verdicts"])
big = {s["timing"]: s for s in rep["shapes"] if s["shape"].startswith("r4096_h4096")}
assert big["kernel"]["verdict"] == "faster", big["kernel"]
PY
grep -q "timing" runs/t/report.md || fail "report.md does not show the timing"
echo "PASS: RMSNorm example in three timings"
