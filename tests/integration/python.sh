# Python plugins, end to end, with the real binaries and the user's interpreter (a virtualenv over
# the system python3 with NumPy): the NumPy example through A/B/A; the interpreter, its
# distributions and the sources' digest recorded in the plan and in every result; no bytecode in the
# materialized variants; resume after a SIGKILL of the orchestrator; a tampered interpreter record
# refused by verify; a resume refused when a distribution changed, naming it; each failure of a
# Python plugin in an arm (an exception in make_problem, run() or verify(), a wrong result, a
# verify() that returns a bool or anything else but a max error) failing only its arm, with the
# traceback in the arm's log and one line in the report, where mentions in its text or its label
# reach no one; and what the dry run before the plan refuses (no import, no entry, no method,
# make_problem raising), by name.
source "$ABH_TESTLIB"

# A python3 with NumPy (python3-numpy, scripts/install-deps.sh).
SYS_PY=$(python_with numpy python3-numpy)
# The user's interpreter: a virtualenv that sees the system's NumPy, plus one distribution of its
# own whose version the test can change.
"$SYS_PY" -m venv --without-pip --system-site-packages "$T/venv" ||
  fail "cannot make a virtualenv: install python3-venv"
PY=$T/venv/bin/python3
site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
fake_dist() {  # VERSION: installs (or moves to) distribution abh-probe-pkg VERSION
  rm -rf "$site"/abh_probe_pkg-*.dist-info
  mkdir -p "$site/abh_probe_pkg-$1.dist-info"
  printf 'Metadata-Version: 2.1\nName: abh-probe-pkg\nVersion: %s\n' "$1" \
    >"$site/abh_probe_pkg-$1.dist-info/METADATA"
}
fake_dist 1.0
# A Triton with a compile-cache key and no Gluon, for the faulty plugin below to import: an arm does
# what a Triton kernel's first launch does on the CPU before its turn, and names what it could not.
mkdir -p "$site/triton/runtime"
: >"$site/triton/__init__.py"
: >"$site/triton/runtime/__init__.py"
echo 'def triton_key(): return "fake"' >"$site/triton/runtime/cache.py"

"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" numpy repo >/dev/null
small_grid grid.json
run_args=(--repo repo --baseline HEAD~1 --candidate HEAD --target numpy --python "$PY"
  --runs-root runs --quiet --color never)

# --- A/B/A of the NumPy example ------------------------------------------------------------------
expect_rc 0 "$ABH" run "${run_args[@]}" --grid grid.json --run-id aba "${FAST[@]}"
R=runs/aba
python3 - "$R" "$PY" <<'PY'
import glob, hashlib, json, os, sys
run, py = sys.argv[1], sys.argv[2]
plan = json.load(open(run + "/plan.json"))
p = plan["python"]
assert p["requested"] == py, p["requested"]
assert p["executable"] == py, (p["executable"], py)
assert p["real_path"] == os.path.realpath(py), p["real_path"]
assert p["sha256"] == hashlib.sha256(open(os.path.realpath(py), "rb").read()).hexdigest()
names = [d.split("==")[0] for d in p["distributions"]]
assert "numpy" in names and "abh-probe-pkg" in names, p["distributions"]
assert p["distributions_sha256"] == hashlib.sha256("\n".join(p["distributions"]).encode()).hexdigest()
for v in plan["variants"]:
    assert v["plugin"] == "variants/%s/src" % v["name"], v["plugin"]
    assert v["device"] == "cpu" and v["recipe"]["python"]["module"] == "kernels.matmul", v
results = glob.glob(run + "/results/*/*.json")
assert len(results) == 6, results
ident = lambda x: {k: x[k] for k in ("executable", "real_path", "version", "sha256",
                                     "distributions_sha256")}
for f in results:
    r = json.load(open(f))
    assert ident(r["python"]) == ident(p), (f, r["python"])
    assert "distributions" not in r["python"], f
    m = r["measurement"]
    assert m["timer"] == "steady" and m["ready_s"] > 0 and m["flops"] > 0, (f, m["timer"])
    assert r["correctness"]["passed"] and r["correctness"]["checked"] > 0, f
    assert r["plugin_sha256"] == next(v["plugin_sha256"] for v in plan["variants"]
                                      if v["name"] == r["invocation"]["variant"])
print("plan and results record the interpreter; ready_s", sorted(
    round(json.load(open(f))["measurement"]["ready_s"], 3) for f in results))
PY
# Each arm imported the module from its own variant's sources, never from the working copy.
grep -q "module kernels.matmul imported from $T/runs/aba/variants/baseline/src" \
  $R/logs/m32_n32_k32/A1.out || fail "A1 import: $(cat $R/logs/m32_n32_k32/A1.out)"
grep -q "module kernels.matmul imported from $T/runs/aba/variants/candidate/src" \
  $R/logs/m32_n32_k32/B.out || fail "B import: $(cat $R/logs/m32_n32_k32/B.out)"
[ -z "$(find runs repo -name __pycache__)" ] || fail "bytecode written: $(find runs repo -name __pycache__)"
expect_rc 0 "$ABH" verify $R
grep -q "verified 6 of 6" "$T/last.out" || fail "verify: $(cat "$T/last.out")"
# The run directory's schemas hold for a Python run too.
"$(schema_python)" - $R "$ABH_SOURCE_DIR/schemas" <<'PY'
import glob, json, sys
from jsonschema import Draft202012Validator
run, schemas = sys.argv[1:3]
for name, files in (("plan", [run + "/plan.json"]), ("result", glob.glob(run + "/results/*/*.json"))):
    v = Draft202012Validator(json.load(open(f"{schemas}/{name}.schema.json")))
    for f in files:
        errs = list(v.iter_errors(json.load(open(f))))
        for e in errs:
            print(f"{f}: at /{'/'.join(map(str, e.absolute_path))}: {e.message}", file=sys.stderr)
        if errs:
            sys.exit(f"FAIL: {f} does not match schemas/{name}.schema.json")
PY
pass "A/B/A of the NumPy example: interpreter, distributions and sources recorded; no bytecode"

# --- provenance: a result's interpreter record edited (digest recomputed) ------------------------
for field in distributions_sha256 sha256 version; do
  rm -rf "$T/c" && cp -a $R "$T/c"
  edit_json "$T/c/results/m96_n64_k80/B.json" "j['python']['$field'] = 'edited'" redigest
  expect_rc 3 "$ABH" verify "$T/c"
  grep -qF "results/m96_n64_k80/B.json: python-interpreter (field 'python.$field')" "$T/last.err" ||
    fail "tampered python.$field: $(cat "$T/last.err")"
done
rm -rf "$T/c" && cp -a $R "$T/c"
edit_json "$T/c/results/m32_n32_k32/A2.json" "del j['python']" redigest
expect_rc 3 "$ABH" verify "$T/c"
grep -qF "results/m32_n32_k32/A2.json: python-interpreter (field 'python')" "$T/last.err" ||
  fail "python record removed: $(cat "$T/last.err")"
pass "a result's interpreter record that differs from the plan is refused"

# --- a plan of another schema version: the Python front end refuses it in the engine's words -----
rm -rf "$T/c" && cp -a $R "$T/c"
edit_json "$T/c/plan.json" "j['schema_version'] = 1" redigest
expect_rc 2 "$PY" -I -B "$ABH_BIN/python/abharness_front_end.py" run --run-dir "$T/c" \
  --shape m32_n32_k32 --arm A1
front_end=$(grep "^abharness-worker: error: " "$T/last.err" | tail -1)
# Refused before anything else: no interpreter identified, no module imported, no engine loaded.
[ ! -s "$T/last.out" ] || fail "the front end went on with another plan schema: $(cat "$T/last.out")"
expect_rc 2 "$WORKER" run --run-dir "$T/c" --shape m32_n32_k32 --arm A1
engine=$(grep "^abharness-worker: error: " "$T/last.err" | tail -1)
[ -n "$front_end" ] && [ "$front_end" = "$engine" ] ||
  fail "the front end and the engine refuse another plan schema differently: '$front_end' vs '$engine'"
grep -qF "field 'schema_version': found 1, this abharness reads plan schema 2 to 3" <<<"$front_end" ||
  fail "the front end's refusal names no schema: $front_end"
cmp -s "$T/c/results/m32_n32_k32/A1.json" $R/results/m32_n32_k32/A1.json ||
  fail "a refused arm replaced its result"
pass "a plan of another schema version is refused by the Python front end as by the engine"

# --- resume after a SIGKILL of the orchestrator ---------------------------------------------------
cat >grid3.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "s48", "params": { "m": 48, "n": 48, "k": 48 } },
  { "id": "s64", "params": { "m": 64, "n": 64, "k": 64 } },
  { "id": "s80", "params": { "m": 80, "n": 48, "k": 72 } } ] }
JSON
SLOW=(--min-samples 5 --min-time 0.3 --max-time 0.4 --max-noise 0.0001 --warmup 1 --until-decided 0)
K=runs/k
"$ABH" run "${run_args[@]}" --grid grid3.json --run-id k "${SLOW[@]}" >"$T/k.out" 2>"$T/k.err" &
orch=$!
# The interpreter probe, the dry run and eight workers importing NumPy come first: on the loaded
# 2-core machine that can take tens of seconds.
has_result() { [ -n "$(ls $K/results/*/*.json 2>/dev/null)" ] || ! kill -0 $orch 2>/dev/null; }
wait_until 300 has_result
[ -n "$(ls $K/results/*/*.json 2>/dev/null)" ] ||
  fail "no result (the run exited, or 5 min passed): $(cat "$T/k.err")"
sleep 0.2
kill -KILL $orch 2>/dev/null || fail "the sweep ended before it could be killed"
wait $orch 2>/dev/null || true
sleep 0.3
left=$(pgrep -f "abharness_front_end.py run --run-dir $T/$K " || true)
[ -z "$left" ] || fail "Python worker(s) $left outlived the killed orchestrator"
before=$(python3 -c "
import glob, json
for p in sorted(glob.glob('$K/results/*/*.json')): print(p, json.load(open(p))['payload_sha256'])")
expect_rc 0 "$ABH" resume $K --quiet
grep -q "arms already valid" "$T/last.err" || fail "resume: $(cat "$T/last.err")"
while read -r path digest; do
  [ "$(jget "$path" 'j["payload_sha256"]')" = "$digest" ] || fail "$path was measured again"
done <<<"$before"
expect_rc 0 "$ABH" verify $K
grep -q "verified 9 of 9" "$T/last.out" || fail "verify after resume: $(cat "$T/last.out")"
pass "killed mid-sweep ($(wc -l <<<"$before") result(s) kept), resumed to a valid 9 of 9"

# --- resume refused when a distribution changed, naming it --------------------------------------
"$ABH" run "${run_args[@]}" --grid grid.json --run-id moved "${SLOW[@]}" >/dev/null 2>"$T/moved.err" &
orch=$!
wait_for_plan $orch runs/moved "$T/moved.err"
kill -KILL $orch 2>/dev/null || true
wait $orch 2>/dev/null || true
fake_dist 1.1
expect_rc 2 "$ABH" resume runs/moved
grep -q "the Python interpreter changed since the plan (abh-probe-pkg 1.0 -> 1.1)" "$T/last.err" ||
  fail "resume after a distribution moved: $(cat "$T/last.err")"
fake_dist 1.0
expect_rc 0 "$ABH" resume runs/moved --quiet
pass "resume refuses a changed distribution, naming it, and resumes once it is back"

# --- failures of a Python plugin ------------------------------------------------------------------
mkdir faulty
git -C faulty init -q -b main
cat >faulty/abharness.json <<'JSON'
{ "schema_version": 1, "plugins": { "py": { "python": { "module": "faulty.problem", "device": "cpu" } } } }
JSON
mkdir faulty/faulty
: >faulty/faulty/__init__.py
# Param "fault" selects how the candidate misbehaves; the baseline (FAULTY = False) ignores it.
cat >faulty/faulty/problem.py <<'PY'
import os

import numpy
import triton  # noqa: F401 (a fake one, in the virtualenv: its first launch's work is done ahead)

from faulty.switch import FAULTY

# What verify() returns for these faults, instead of the max error: only a number (or a
# Verification, or a dict of its fields) is a max error; False (also NumPy's) is a wrong result.
RETURNS = {"false": False, "np_false": numpy.bool_(False), "true": True, "none": None,
           "str": "0.0", "list": [0.0], "negative": -1.0, "dict_bool": {"max_error": False}}


class Add:
    tolerance = 1e-12

    def __init__(self, fault):
        self.fault = fault
        self.x, self.out = [1.5] * 64, None

    def run(self):
        if self.fault == "run_raises":
            raise ValueError("injected failure in run")
        self.out = [v + 2.0 for v in self.x]
        if self.fault == "wrong":
            self.out[0] += 1.0

    def verify(self):
        if self.fault == "verify_raises":
            raise RuntimeError("injected failure in verify")
        if self.fault == "mentions":
            raise RuntimeError("ping @octocat and @abh-org/reviewers, see #123 and GH-45")
        if self.fault == "assert":
            assert self.out[0] == 99.0, "injected assertion: out[0] is %r" % self.out[0]
        if self.fault in RETURNS:
            return RETURNS[self.fault]
        return max(abs(v - 3.5) / 3.5 for v in self.out)


class NoVerify:
    def run(self):
        pass


def make_problem(params):
    fault = params.get("fault", "") if FAULTY else ""
    if fault == "make_raises":
        raise KeyError("injected failure in make_problem")
    if fault == "make_killed":  # as the out-of-memory killer ends a process: SIGKILL, no word
        os.kill(os.getpid(), 9)
    # As a problem that depends on its arm's state would: ABH_PARENT_PID is set in arms only, not
    # in the dry run before the plan.
    if fault == "make_raises_in_arm" and os.environ.get("ABH_PARENT_PID"):
        raise KeyError("injected failure in make_problem, in the arm")
    return NoVerify() if fault == "no_verify" else Add(fault)
PY
echo 'FAULTY = False' >faulty/faulty/switch.py
printf '__pycache__/\n' >faulty/.gitignore
git_q -C faulty add -A && git_q -C faulty commit -qm "baseline: correct"
echo 'FAULTY = True' >faulty/faulty/switch.py
git_q -C faulty commit -qam "candidate: faults on demand"
cat >faults.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "good", "params": {} },
  { "id": "mentions", "label": "cc @hubot, fixes #7", "params": { "fault": "mentions" } },
  { "id": "run_raises", "params": { "fault": "run_raises" } },
  { "id": "verify_raises", "params": { "fault": "verify_raises" } },
  { "id": "wrong", "params": { "fault": "wrong" } },
  { "id": "assert", "params": { "fault": "assert" } },
  { "id": "make_raises_in_arm", "params": { "fault": "make_raises_in_arm" } },
  { "id": "false", "params": { "fault": "false" } },
  { "id": "np_false", "params": { "fault": "np_false" } },
  { "id": "true", "params": { "fault": "true" } },
  { "id": "none", "params": { "fault": "none" } },
  { "id": "str", "params": { "fault": "str" } },
  { "id": "list", "params": { "fault": "list" } },
  { "id": "negative", "params": { "fault": "negative" } },
  { "id": "dict_bool", "params": { "fault": "dict_bool" } } ] }
JSON
fault_args=(--repo faulty --target py --python "$PY" --runs-root runs "${FAST[@]}" --color never)
expect_rc 4 "$ABH" run "${fault_args[@]}" --baseline HEAD~1 --candidate HEAD --grid faults.json \
  --run-id f
F=runs/f
primed=$(grep -h "first-launch work done ahead" $F/logs/good/A1.out) ||
  fail "an arm of a plugin importing Triton did not do its first-launch work ahead"
grep -q "compile-cache key [0-9.]* s; not done, left to the first launch: Gluon descriptor types (Module" \
  <<<"$primed" || fail "the Triton priming line is wrong: $primed"
reason() { jget $F/logs/$1/B.failure.json 'j["reason"]'; }
# want SHAPE EXIT TEXT: the arm failed with that exit code, its reason names TEXT on one line, and
# its log holds the Python traceback.
want() {
  [ ! -e $F/results/$1/B.json ] || fail "$1: a failed arm left a result"
  [ -f $F/results/$1/A1.json ] && [ -f $F/results/$1/A2.json ] || fail "$1: baseline arms lost"
  local r
  r=$(reason "$1")
  echo "$1: $r"
  [ "$(wc -l <<<"$r")" = 1 ] || fail "$1: the reason is not one line"
  grep -q "exit code $2" <<<"$r" || fail "$1: expected exit code $2 in '$r'"
  grep -qF "$3" <<<"$r" || fail "$1: expected '$3' in '$r'"
  [ -z "${4:-}" ] || grep -q "Traceback (most recent call last)" $F/logs/$1/B.err ||
    fail "$1: no traceback in the arm's log: $(cat $F/logs/$1/B.err)"
}
want run_raises 3 "run() raised ValueError: injected failure in run" tb
want verify_raises 3 "verify() raised RuntimeError: injected failure in verify" tb
want wrong 4 "wrong result: max relative error 0.286 > tolerance 1e-12"
want assert 4 "AssertionError: injected assertion: out[0] is 3.5" tb
want make_raises_in_arm 3 "raised KeyError: 'injected failure in make_problem, in the arm'" tb
# verify() returning something other than a max error: False is a wrong result; True, None, a
# string, a list, a negative error or a bool inside a dict are refused, naming the plugin's entry
# with its parameters and the function; none of them is recorded as a pass.
want false 4 "wrong result: max relative error inf > tolerance 1e-12 (verify() returned False)"
want np_false 4 "(verify() returned False)"
entry='faulty.problem.make_problem({"fault": '
want true 3 "${entry}\"true\"}): verify() returned True (bool): a bool is no max error"
want none 3 "${entry}\"none\"}): verify() returned None (NoneType)"
want str 3 "${entry}\"str\"}): verify() returned '0.0' (str)"
want list 3 "${entry}\"list\"}): verify() returned [0.0] (list)"
want negative 3 "${entry}\"negative\"}): verify() returned -1.0 (float): a max error is a distance"
want dict_bool 3 "${entry}\"dict_bool\"}): verify(): max error False (bool), which is not a number"
[ -f $F/results/good/B.json ] || fail "the good shape's candidate arm did not run"
for s in run_raises verify_raises wrong assert make_raises_in_arm false true none str; do
  grep -qF "$s" $F/report.md || fail "report.md does not list $s"
done
grep -q "failed: .*run() raised ValueError" $F/report.md || fail "report.md lacks the reason"
# A label and an exception's text that mention users and issues: the PR comment (which names the
# first ten failed shapes, this one among them) and report.md, also written for a pull request,
# quote them so that GitHub neither notifies nor links.
for f in $F/report.pr.md $F/report.md; do
  for ref in @octocat @abh-org/reviewers '#123' GH-45 @hubot '#7'; do
    grep -qF "$ref" $f && fail "$f quotes $ref as GitHub would link it: $(grep -F "$ref" $f)"
  done
  for shown in '@&#8203;octocat' '@&#8203;abh-org/reviewers' '#&#8203;123' 'GH-&#8203;45' \
    '@&#8203;hubot' '#&#8203;7'; do
    grep -qF "$shown" $f || fail "$f lacks $shown"
  done
done
pass "exceptions in an arm and wrong results each fail only their arm"

# What the dry run before the plan sees: make_problem raising, or returning an object without
# verify(), is refused for every such shape at once, before any arm, and leaves no run directory.
cat >made.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "good", "params": {} },
  { "id": "no_verify", "params": { "fault": "no_verify" } },
  { "id": "make_raises", "params": { "fault": "make_raises" } } ] }
JSON
expect_rc 2 "$ABH" run "${fault_args[@]}" --baseline HEAD~1 --candidate HEAD --grid made.json \
  --run-id made
grep -qF "the candidate Python plugin faulty.problem.make_problem (under $PY) fails its dry run before any arm" \
  "$T/last.err" || fail "dry run: $(cat "$T/last.err")"
grep -qF "2 of 3 shapes refused: shape no_verify: faulty.problem.make_problem({\"fault\": \"no_verify\"}) returned NoVerify, which has no verify() method" \
  "$T/last.err" || fail "no_verify: $(cat "$T/last.err")"
grep -qF "shape make_raises: faulty.problem.make_problem({\"fault\": \"make_raises\"}) raised KeyError: 'injected failure in make_problem'" \
  "$T/last.err" || fail "make_raises: $(cat "$T/last.err")"
[ ! -e runs/made ] || fail "a run directory was left for shapes refused before any arm"
pass "make_problem raising, or a problem without verify(), is refused before any arm"

# A check process killed without a word (as the out-of-memory killer does) is named as killed,
# with what most often sends a SIGKILL, instead of an empty reason.
cat >killed.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "make_killed", "params": { "fault": "make_killed" } } ] }
JSON
expect_rc 2 "$ABH" run "${fault_args[@]}" --baseline HEAD~1 --candidate HEAD --grid killed.json \
  --run-id killed
grep -qF "fails its dry run before any arm (its check process: killed by signal 9 (SIGKILL)): it wrote nothing before it ended (a SIGKILL that abharness did not send is most often the kernel's out-of-memory killer" \
  "$T/last.err" || fail "killed check: $(cat "$T/last.err")"
pass "a check killed without a word is named as killed, with the out-of-memory hint"

# Module-level failures: the candidate (WORKTREE) does not import, or lacks its entry.
cat >one.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "one", "params": {} } ] }
JSON
git_q -C faulty reset -q --hard HEAD~1
echo 'import no_such_module_anywhere' >>faulty/faulty/problem.py
expect_rc 2 "$ABH" run "${fault_args[@]}" --baseline HEAD --candidate WORKTREE --grid one.json \
  --run-id noimport
grep -qF "cannot import module faulty.problem from the variant's sources $T/runs/noimport/variants/candidate/src: ModuleNotFoundError: No module named 'no_such_module_anywhere'" \
  "$T/last.err" || fail "no-import: $(cat "$T/last.err")"
[ ! -e runs/noimport ] || fail "a run directory was left for a module that does not import"
git_q -C faulty checkout -q -- faulty/problem.py
sed -i 's/^def make_problem/def make_problem_renamed/' faulty/faulty/problem.py
expect_rc 2 "$ABH" run "${fault_args[@]}" --baseline HEAD --candidate WORKTREE --grid one.json \
  --run-id noentry
grep -qF "module faulty.problem has no function 'make_problem'" "$T/last.err" ||
  fail "no entry: $(cat "$T/last.err")"
[ ! -e runs/noentry ] || fail "a run directory was left for a module without its entry"
[ -z "$(find runs faulty -name __pycache__)" ] || fail "bytecode written: $(find runs faulty -name __pycache__)"
pass "a module that does not import, and one without its entry, are refused before any arm"
