# Everything that can be checked is checked before anything is built or written, and a start that
# fails before its first arm leaves no run directory (docs/provenance.md, "Checked before anything
# is built"). Each case: the exit code, a message naming the fix, and no run directory left:
#  - statistics options out of range (--noise-band 0.7, 2 and 70%, --confidence 0.4 and 95,
#    --max-noise 300%, --clock-floor 97), alone and with --until-decided, --cpus "", "--baseline="
#    and negative seeds: refused before anything is built, a bare value above 1 with its fix as a
#    percentage and a fraction;
#  - --until-decided so large that plan.json would exceed what its reader accepts: refused up front
#    with the largest value that fits, which is accepted;
#  - a grid parameter the plugin does not know, a tactic it does not have, a timer that cannot time
#    its device, a Python module that does not import (no NumPy) or refuses a shape: refused after
#    the build, before the plan and any arm, naming shape, parameter and plugin;
#  - a CUDA target, and a Python plugin that does not declare its device, on a machine without an
#    NVIDIA driver: "no NVIDIA driver" before anything is built (skipped, loudly, where a driver is);
#  - `run --resume` with another --until-decided or --cpus: refused naming the option and the plan's
#    value, nothing measured;
#  - a run directory without a plan (a failed build): run and resume each name the way out, and
#    neither sends the user to the other;
#  - a run whose dry run is not recorded as passed (killed during it): resume does it again.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m24", "params": { "m": 24, "n": 24, "k": 24 } } ] }
JSON
# The common flags; each call adds its revisions and its grid.
common=(--repo repo "${FAST[@]}" --quiet --color never)
ab=(--baseline HEAD~1 --candidate HEAD)
args=("${common[@]}" "${ab[@]}" --grid grid.json)
# says TEXT: the last command's stderr contains TEXT (a fixed string).
says() { grep -qF -- "$1" "$T/last.err" || { cat "$T/last.err" >&2; fail "stderr lacks: $1"; }; }
lacks() { ! grep -qF -- "$1" "$T/last.err" || { cat "$T/last.err" >&2; fail "stderr has: $1"; }; }
# The run directories under runs/ (its build cache, .cache, is not one).
run_dirs() { ls runs 2>/dev/null | tr '\n' ' '; }
# refused_early WHAT ARGS...: exit 2 before anything was built or created.
refused_early() {
  local what=$1; shift
  expect_rc 2 "$ABH" run "$@" --runs-root early
  [ ! -e early ] || fail "$what: a runs root or run directory was created: $(ls -A early)"
  lacks "building"
}

# --- statistics options, checked before anything is built ---------------------------------------
refused_early "noise band 0.7" "${args[@]}" --noise-band 0.7
says "--noise-band 0.7 (70%) is out of range: give a fraction in [0, 0.5)"
refused_early "noise band 2" "${args[@]}" --noise-band 2
says "--noise-band: '2' is a fraction above 1; if a percentage was meant, write 2% or 0.02"
# A percentage is the fraction it names: 70% is 0.7, out of range as 0.7 is.
refused_early "noise band 70%" "${args[@]}" --noise-band 70%
says "--noise-band 0.7 (70%) is out of range"
refused_early "max noise 300%" "${args[@]}" --max-noise 300%
says "--max-noise must be in (0, 1)"
refused_early "clock floor 97" "${args[@]}" --clock-floor 97
says "--clock-floor: '97' is a fraction above 1; if a percentage was meant, write 97% or 0.97"
refused_early "confidence 0.4" "${args[@]}" --confidence 0.4
says "--confidence 0.4 is out of range: give a level in (0.5, 1), e.g. 0.95"
refused_early "confidence 95" "${args[@]}" --confidence 95
says "--confidence: '95' is a fraction above 1; if a percentage was meant, write 95% or 0.95"
# With --until-decided the band would be written into the plan as the adaptive rule's.
refused_early "noise band with --until-decided" "${args[@]}" --noise-band 0.7 --until-decided 2
says "--noise-band 0.7 (70%) is out of range"
# Numbers a plan cannot hold (JSON has no infinity or NaN): once written as null, no command
# could read the plan back, and every arm failed.
for o in "--max-time inf" "--max-time 1e999" "--min-time nan" "--min-time inf" "--arm-timeout inf"; do
  refused_early "$o" --repo repo --quiet "${ab[@]}" --grid grid.json $o
  says "${o% *} must be"
done
refused_early "--decisive-factor inf" "${args[@]}" --decisive-factor inf
says "--decisive-factor inf is out of range"
# More samples than a result file can hold within what its reader accepts.
refused_early "--max-samples 20000000" "${args[@]}" --max-samples 20000000
says "--max-samples 20000000 is more than 1000000"
refused_early "--cpus empty" "${args[@]}" --cpus ""
says '--cpus "": give it a value, or leave --cpus out'
# An option written with an empty value ("--baseline=") would take the next word as its value.
refused_early "--baseline=" --repo repo --quiet --baseline= --candidate HEAD --grid grid.json
says "--baseline= gives no value: write --baseline=VALUE or --baseline VALUE"
# A negative seed would wrap around to a huge unsigned one.
refused_early "--seed=-1" "${args[@]}" --seed=-1
says "--seed: a seed is a whole number >= 0, not -1"
refused_early "--schedule-seed -3" "${args[@]}" --schedule-seed -3
says "--schedule-seed: a seed is a whole number >= 0, not -3"
pass "statistics options, an empty --cpus, an empty value and a negative seed are refused before anything is built"

# --- a plan larger than its reader accepts --------------------------------------------------------
small_grid two.json
start=$(date +%s)
refused_early "until-decided 100000" "${common[@]}" "${ab[@]}" --grid two.json --until-decided 100000
says "--until-decided 100000: the plan would hold 600006 tasks (2 shapes x 3 arms x 100001 blocks"
says "abharness reads plans of at most 64 MiB"
most=$(sed -n 's/.*give --until-decided \([0-9]*\) or less.*/\1/p' "$T/last.err")
[ -n "$most" ] && [ "$most" -gt 1000 ] && [ "$most" -lt 100000 ] ||
  fail "no largest --until-decided in: $(cat "$T/last.err")"
[ $(($(date +%s) - start)) -lt 60 ] || fail "the refusal took $(($(date +%s) - start)) s"
# One more is refused; the largest passes the size check, and the next check (the revision) is
# what refuses it, so that neither builds anything.
refused_early "until-decided most+1" "${common[@]}" --grid two.json --until-decided $((most + 1)) \
  --baseline no-such-revision --candidate HEAD
says "give --until-decided $most or less"
refused_early "until-decided most" "${common[@]}" --grid two.json --until-decided "$most" \
  --baseline no-such-revision --candidate HEAD
says "--baseline: "
lacks "the plan would hold"
pass "--until-decided 100000 is refused up front; the largest that fits ($most) is accepted"

# --- after the build, before the plan: what only the built plugin can tell ------------------------
cat >typo.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "ok", "params": { "m": 24, "n": 24, "k": 24 } },
  { "id": "typo", "params": { "m": 24, "n": 24, "k": 24, "seeed": 3 } },
  { "id": "tn", "params": { "m": 24, "n": 24, "k": 24, "layout": "TN" } } ] }
JSON
expect_rc 2 "$ABH" run "${common[@]}" "${ab[@]}" --grid typo.json --runs-root runs --run-id typo
says "fails its dry run before any arm (its check process: exit code "
says "2 of 3 shapes refused: shape typo: cpu-gemm: cannot create problem"
says "unknown param 'seeed'"
says "shape tn: "
says "param 'layout' is \"TN\""
says "fix the grid, the options or the plugin and run again (nothing was measured)"
[ -z "$(run_dirs)" ] || fail "a run directory was left: $(run_dirs)"
pass "grid parameters the plugin refuses are named, shape by shape, before any arm"

expect_rc 2 "$ABH" run "${args[@]}" --tactic no-such-tactic --runs-root runs --run-id tactic
says "shape m24: "
says "no-such-tactic"
[ -z "$(run_dirs)" ] || fail "a run directory was left: $(run_dirs)"
expect_rc 2 "$ABH" run "${args[@]}" --timer cupti --runs-root runs --run-id timer
says "--timer cupti: the baseline plugin runs on the CPU"
[ -z "$(run_dirs)" ] || fail "a run directory was left: $(run_dirs)"
pass "a tactic the plugin lacks and a timer that cannot time it are refused before any arm"

# --tactic default: accepted by the dry run (it is a mode, not a key) and recorded in each result.
expect_rc 0 "$ABH" run "${args[@]}" --tactic default --runs-root runs --run-id default
for f in runs/default/results/m24/*.json; do
  [ "$(jget "$f" 'j["measurement"]["tactic_choice"]')" = "default: the plugin's first tactic, not tuned" ] ||
    fail "$f: tactic_choice $(jget "$f" 'j["measurement"]["tactic_choice"]')"
done
pass "--tactic default measures the plugin's first tactic and says so in every result"

# The dry run runs while the first workers load, after the plan is written; a passed one is
# recorded, and a run without that record (killed during its dry run) has it done by resume.
[ -f runs/default/logs/check/passed ] || fail "a passed dry run is not recorded"
rm runs/default/logs/check/passed runs/default/results/m24/B.json
expect_rc 0 "$ABH" resume runs/default --quiet --color never
[ -f runs/default/logs/check/passed ] || fail "resume did not do the missing dry run"
rm -rf runs/default
pass "resume does the dry run of a run that has none recorded, then the missing arm"

# --- a Python plugin: its module's imports and its problems, under the user's interpreter ---------
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" numpy pyrepo >/dev/null
python3 -m venv --without-pip "$T/bare" || fail "cannot make a virtualenv: install python3-venv"
"$T/bare/bin/python3" -c "import numpy" 2>/dev/null && fail "the bare virtualenv has NumPy"
py_args=(--repo pyrepo --target numpy "${FAST[@]}" --quiet --runs-root runs)
expect_rc 2 "$ABH" run "${py_args[@]}" "${ab[@]}" --grid grid.json --python "$T/bare/bin/python3" \
  --run-id nonumpy
says "Python plugin kernels.matmul.make_problem (under $T/bare/bin/python3) fails its dry run"
says "cannot import module kernels.matmul from the variant's sources"
says "ModuleNotFoundError: No module named 'numpy'"
[ -z "$(run_dirs)" ] || fail "a run directory was left: $(run_dirs)"
cat >nom.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "no_m", "params": { "n": 24, "k": 24 } } ] }
JSON
expect_rc 2 "$ABH" run "${py_args[@]}" "${ab[@]}" --grid nom.json --python /usr/bin/python3 \
  --run-id nom
says "1 of 1 shapes refused: shape no_m: kernels.matmul.make_problem({\"k\": 24, \"n\": 24}) raised KeyError: 'm'"
[ -z "$(run_dirs)" ] || fail "a run directory was left: $(run_dirs)"
[ -z "$(find runs pyrepo -name __pycache__)" ] || fail "bytecode written: $(find runs pyrepo -name __pycache__)"
pass "a Python module without NumPy, and a shape its entry refuses, are refused before any arm"

# --- a GPU plugin on a machine without an NVIDIA driver, before anything is built ----------------
if [ -e /proc/driver/nvidia ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
  echo "SKIP (loudly): this machine has an NVIDIA driver; the no-driver cases need one without"
elif [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
  echo "SKIP (loudly): no CUDA toolkit, so the CUDA recipe cannot even be read here"
else
  "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cuda cudarepo >/dev/null
  expect_rc 2 "$ABH" run --repo cudarepo --baseline HEAD~1 --candidate HEAD --target cuda \
    --grid grid.json "${FAST[@]}" --quiet --runs-root "$T/fresh/runs"
  says "the baseline plugin (target 'cuda') compiles CUDA (its recipe runs nvcc), but this machine has no NVIDIA driver (libcuda.so.1 cannot be loaded"
  says "run it on a machine with an NVIDIA GPU and its driver, or choose a target that runs on the CPU"
  lacks "driver version is insufficient"
  lacks "building"
  [ ! -e "$T/fresh" ] || fail "the runs root made for the failed start was left: $(find "$T/fresh")"
  # A Python plugin that does not say where it runs runs on a GPU: the fix names "device".
  sed -i 's/, "device": "cpu"//' pyrepo/abharness.json
  grep -q device pyrepo/abharness.json && fail "the manifest still declares its device"
  expect_rc 2 "$ABH" run "${py_args[@]}" --baseline HEAD --candidate WORKTREE --grid grid.json \
    --python /usr/bin/python3 --run-id nodevice
  says "the candidate plugin (target 'numpy') is a Python plugin, which runs on a GPU unless its manifest says \"device\": \"cpu\", but this machine has no NVIDIA driver"
  says "declare \"device\": \"cpu\" in the \"python\" object of its recipe in abharness.json"
  [ -z "$(run_dirs)" ] || fail "a run directory was left: $(run_dirs)"
  git -C pyrepo checkout -q -- abharness.json
  pass "a CUDA target and a Python plugin of no declared device: 'no NVIDIA driver', nothing built"
fi

# --- run --resume with options the plan did not fix -----------------------------------------------
expect_rc 0 "$ABH" run "${args[@]}" --runs-root runs --run-id done
R=runs/done
rm $R/results/m24/B.json
expect_rc 2 "$ABH" run "${args[@]}" --resume $R --until-decided 3
says "cannot resume $T/$R: --until-decided 3 differs from the plan's until_decided 0"
says "continue with \`abharness resume $T/$R\`"
planned=$(jget $R/plan.json 'j["tasks"][0]["cpus"][0]')
other=$(python3 -c "import os; print(min(set(os.sched_getaffinity(0)) - {$planned}, default=''))")
if [ -n "$other" ]; then
  expect_rc 2 "$ABH" run "${args[@]}" --resume $R --cpus "$other"
  says "--cpus $other (arms of lane 0 on CPU(s) $other) differs from the plan's placement (CPU(s) $planned)"
else
  echo "SKIP (loudly): one CPU only, no other --cpus to give"
fi
[ ! -e $R/results/m24/B.json ] || fail "a refused resume measured something"
expect_rc 0 "$ABH" run "${args[@]}" --resume $R --cpus "$planned"
[ -f $R/results/m24/B.json ] || fail "the resume with the plan's --cpus did not measure"
pass "run --resume with another --until-decided or --cpus is refused, naming the plan's value"

# --- a run directory without a plan: advice that leads somewhere ---------------------------------
echo 'this does not compile' >>repo/kernel.cpp
expect_rc 1 "$ABH" run "${common[@]}" --baseline HEAD --candidate WORKTREE --grid grid.json \
  --runs-root runs --run-id broken
says "build of"
[ -f runs/broken/variants/candidate/build.log ] || fail "the failed build's log was not kept"
git -C repo checkout -q -- kernel.cpp
expect_rc 2 "$ABH" run "${args[@]}" --runs-root runs --run-id broken
says "already exists and holds no plan"
says "remove it (rm -r '$T/runs/broken') or give another --run-id"
lacks "abharness resume"
expect_rc 2 "$ABH" resume runs/broken
says "there is nothing to resume; remove it (rm -r"
says "and start the run again with \`abharness run\`"
rm -r runs/broken
pass "a run directory without a plan: run and resume both say to remove it, neither to use the other"

# An option that does nothing alone is refused, naming what it needs.
before=$(run_dirs)
expect_rc 2 "$ABH" run "${common[@]}" "${ab[@]}" --grid grid.json --runs-root runs --allow-undecided
says "--allow-undecided requires --fail-on-regression"
[ "$(run_dirs)" = "$before" ] || fail "a run directory was left: $(run_dirs)"
pass "--allow-undecided without --fail-on-regression is refused"
