# What is timed, on the CPU (docs/method.md, "Three timings"):
#  - a bad --timing (an unknown name, a name given twice, an empty item) is refused before anything
#    is built, naming the flag, the item and the names there are;
#  - graph and launch time GPU work: a CPU plugin is refused before its plan is written, naming the
#    plugin and the fix (--timing kernel), and no run directory is left; before anything is built
#    where the machine has no GPU or the plugin's manifest declares the CPU;
#  - a kernel-timed run records its timing in the plan, in every result's invocation and on every
#    report row, and the CSV carries it in its last column;
#  - a resume with another --timing is refused, naming the plan's settings.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid grid.json
args=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json "${FAST[@]}" --quiet --color never)
says() { grep -qF -- "$1" "$T/last.err" || { cat "$T/last.err" >&2; fail "stderr lacks: $1"; }; }

for bad in wall kernel,kernel "kernel,"; do
  expect_rc 2 "$ABH" run "${args[@]}" --runs-root early --timing "$bad"
  [ ! -e early ] || fail "--timing $bad: a runs root was created"
  ! grep -q building "$T/last.err" || fail "--timing $bad: refused only after building"
done
says "use one or more of kernel, graph, launch"
pass "a bad --timing is refused before anything is built"

# A C++ recipe does not say where its plugin runs: on a machine without a GPU the timing is
# refused for want of one, before anything is built; on one with a GPU, once the plugin is built.
for t in graph launch kernel,graph; do
  expect_rc 2 "$ABH" run "${args[@]}" --runs-root refused --run-id r --timing "$t"
  says "times GPU work"
  says "use --timing kernel"
  [ ! -e refused/r ] || fail "--timing $t on a CPU plugin left a run directory"
  if [ ! -e /proc/driver/nvidia ]; then
    ! grep -q building "$T/last.err" || fail "--timing $t without a GPU: refused only after building"
    says "is asked for timing '${t#kernel,}' (--timing $t), which times GPU work, but this machine has no NVIDIA driver"
  fi
done
pass "graph and launch timings are refused for a CPU plugin, naming the fix, leaving no run"

# A Python plugin that declares "device": "cpu" is refused before anything is built, GPU or not.
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" numpy pyrepo >/dev/null
grep -q '"device": "cpu"' pyrepo/abharness.json || fail "the numpy demo no longer declares its device"
expect_rc 2 "$ABH" run --repo pyrepo --target numpy --baseline HEAD~1 --candidate HEAD \
  --grid grid.json "${FAST[@]}" --quiet --color never --runs-root refused --run-id py \
  --python /usr/bin/python3 --timing launch
says "--timing launch: timing 'launch' times GPU work"
says "plugin runs on the CPU"
says "use --timing kernel"
! grep -q building "$T/last.err" || fail "a declared CPU Python plugin was refused only after building"
[ ! -e refused/py ] || fail "the refused Python run left a run directory"
pass "a Python plugin declared to run on the CPU is refused graph and launch before any build"

expect_rc 0 "$ABH" run "${args[@]}" --runs-root runs --run-id k --timing kernel
python3 - runs/k <<'PY' || fail "the timing is not recorded everywhere"
import csv, glob, json, sys
run = sys.argv[1]
plan = json.load(open(run + "/plan.json"))
assert plan["settings"]["timing"] == "kernel", plan["settings"]
assert all(s["timing"] == "kernel" and "@" not in s["id"] for s in plan["shapes"]), plan["shapes"]
results = glob.glob(run + "/results/*/*.json")
assert results
for f in results:
    r = json.load(open(f))
    assert r["invocation"]["settings"]["timing"] == "kernel", f
rep = json.load(open(run + "/report.json"))
assert all(s["timing"] == "kernel" for s in rep["shapes"]), rep["shapes"]
assert rep["by_timing"] == [], rep["by_timing"]
rows = list(csv.reader(open(run + "/report.csv")))
col = rows[0].index("timing")
assert all(r[col] == "kernel" for r in rows[1:]), rows
PY
grep -q "timing: kernel" runs/k/report.md || fail "report.md does not name the timing"
pass "plan, results, report.json, CSV and Markdown record the kernel timing"

expect_rc 2 "$ABH" run "${args[@]}" --resume runs/k --timing kernel,graph
says "the measurement settings given differ from the plan's: timing \"kernel,graph\" (the plan's \"kernel\")"
pass "a resume with another --timing is refused, naming the setting"
