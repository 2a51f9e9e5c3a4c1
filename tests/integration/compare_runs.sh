# `abharness compare` on two real CPU runs of the same comparison: each run is verified first,
# then the per-shape speedups and times are put side by side under a title that says this is a
# comparison across runs, not an interleaved measurement, in every format (--out). Two runs with
# one run id are compared and labelled by directory; one run given twice (any spelling of its
# directory, or a copy) is refused. A run whose result file was tampered with is refused by name
# with exit 3 and nothing is compared.
source "$ABH_TESTLIB"
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id week1 "${FAST[@]}" --quiet
[ ! -s "$T/last.out" ] || fail "run --quiet printed on stdout: $(head -3 "$T/last.out")"
# --quiet silences the table and progress, never what --print asks for.
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id week2 "${FAST[@]}" -q --print json
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/last.out" ||
  fail "run -q --print json printed no JSON"
expect_rc 0 "$ABH" report runs/week2 -q --print json
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/last.out" ||
  fail "report -q --print json printed no JSON"
expect_rc 0 "$ABH" report runs/week2 -q
[ ! -s "$T/last.out" ] || fail "report -q printed on stdout"
expect_rc 0 "$ABH" compare runs/week1 runs/week2 -q --print csv
grep -q "m32_n32_k32" "$T/last.out" || fail "compare -q --print csv printed no table"
expect_rc 0 "$ABH" compare runs/week1 runs/week2 -q
[ ! -s "$T/last.out" ] || fail "compare -q printed on stdout"

expect_rc 0 "$ABH" compare runs/week1 runs/week2 --print markdown --out cmp
grep -qi "not interleaved" "$T/last.out" || fail "the comparison does not say it is not interleaved"
for id in week1 week2 m32_n32_k32 m96_n64_k80; do
  grep -q "$id" "$T/last.out" || fail "the comparison lacks $id"
done
for ext in md json csv svg; do [ -s cmp/compare.$ext ] || fail "compare --out wrote no compare.$ext"; done
PY=$(schema_python)
"$PY" - cmp/compare.json "$ABH_SOURCE_DIR/schemas/compare.schema.json" <<'PY' || fail "compare.json against its schema"
import json, sys
from jsonschema import Draft202012Validator
doc, schema = (json.load(open(p)) for p in sys.argv[1:3])
Draft202012Validator.check_schema(schema)
errs = list(Draft202012Validator(schema).iter_errors(doc))
for e in errs: print(f"/{'/'.join(map(str, e.absolute_path))}: {e.message}", file=sys.stderr)
sys.exit(1 if errs else 0)
PY
expect_rc 0 "$ABH" compare runs/week1 runs/week2 --print json
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/last.out" || fail "--print json is not JSON"
pass "two verified runs side by side in every format"

# Two runs that share a run id (one per machine, each CI job naming its run alike) are two runs:
# compared, each labelled with its directory in every format.
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root machine2 --run-id week1 "${FAST[@]}" --quiet
expect_rc 0 "$ABH" compare runs/week1 machine2/week1 --out same-id
for f in "$T/last.out" same-id/compare.md same-id/compare.csv same-id/compare.svg; do
  grep -qF "week1 (runs/week1)" "$f" && grep -qF "week1 (machine2/week1)" "$f" ||
    fail "$f does not tell the two week1 runs apart: $(head -c 2000 "$f")"
done
[ "$(jget same-id/compare.json '[r["run_dir"] for r in j["runs"]]')" = "['runs/week1', 'machine2/week1']" ] ||
  fail "compare.json: $(jget same-id/compare.json '[r["run_dir"] for r in j["runs"]]')"
pass "two runs with one run id are compared, labelled by directory"

# One run given twice is a usage error, however its directory is spelled, and so is a copy of one
# run (the same plan nonce); one run alone too.
expect_rc 2 "$ABH" compare runs/week1 runs/week1
ln -s week1 runs/alias
for twice in ./runs/../runs/week1/ runs/alias "$T/runs/week1"; do
  expect_rc 2 "$ABH" compare runs/week1 "$twice"
  grep -qF "are the same run directory ($T/runs/week1)" "$T/last.err" ||
    fail "$twice: $(cat "$T/last.err")"
done
cp -a runs/week1 copy-of-week1
expect_rc 2 "$ABH" compare runs/week1 copy-of-week1
grep -qF "copy-of-week1 and runs/week1 are copies of one run (the same run nonce " "$T/last.err" ||
  fail "a copy of one run: $(cat "$T/last.err")"
expect_rc 2 "$ABH" compare runs/week1
pass "one run given twice, under any spelling or as a copy, is refused"

# Runs of another repository on other shapes share nothing: compare refuses them (exit 2) and
# names both repositories.
cp -r repo other-repo
echo '{ "schema_version": 1, "shapes": [ { "id": "m24", "params": { "m": 24, "n": 24, "k": 24 } } ] }' >other.json
expect_rc 0 "$ABH" run --repo other-repo --baseline HEAD~1 --candidate HEAD --grid other.json \
  --runs-root runs --run-id other "${FAST[@]}" --quiet
expect_rc 2 "$ABH" compare runs/week1 runs/other
grep -qF "the runs share no shape" "$T/last.err" || fail "no shape in common is not said"
grep -qF "the runs measure different repositories: " "$T/last.err" &&
  grep -qF "other-repo" "$T/last.err" || fail "the differing repositories are not named"
pass "runs that share no shape are refused, naming their repositories"

# Tamper with one result of week2: compare refuses it by name and compares nothing.
f=$(ls runs/week2/results/*/*.json | head -1)
python3 - "$f" <<'PY'
import json, sys
p = sys.argv[1]; j = json.load(open(p))
j["measurement"]["samples_ns"][0] = j["measurement"]["samples_ns"][0] * 0.5
json.dump(j, open(p, "w"))
PY
expect_rc 3 "$ABH" compare runs/week1 runs/week2
grep -q "week2" "$T/last.err" || fail "the refusal does not name the tampered run"
grep -qi "refused" "$T/last.err" || fail "the refusal does not say the run is refused"
[ ! -s "$T/last.out" ] || fail "a refused comparison still printed a table"
pass "a tampered run is refused by name (exit 3)"
