# `abharness compare` on two real CPU runs of the same comparison: each run is verified first,
# then the per-shape speedups and times are put side by side under a title that says this is a
# comparison across runs, not an interleaved measurement, in every format (--out). A run whose
# result file was tampered with is refused by name with exit 3 and nothing is compared.
source "$ABH_TESTLIB"
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
for id in week1 week2; do
  expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
    --runs-root runs --run-id $id "${FAST[@]}" --quiet
done

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

# One run given twice is a usage error, one run alone too.
expect_rc 2 "$ABH" compare runs/week1 runs/week1
expect_rc 2 "$ABH" compare runs/week1

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
