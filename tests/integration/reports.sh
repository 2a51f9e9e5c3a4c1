# Reports end to end on the CPU plugin: a real run, then each format checked structurally (JSON
# against schemas/report.schema.json, SVG as well-formed XML with one bar per shape, Markdown
# summary before the table with provenance folded, CSV one row per shape); `--print json` is the
# same report on stdout; `abharness report` re-renders byte-identical files; and the exit codes
# for a regression (--fail-on-regression) and an incomplete sweep.
source "$ABH_TESTLIB"
PY=$(schema_python)
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id r "${FAST[@]}" --print json
R=runs/r
"$PY" - "$R" "$ABH_SOURCE_DIR/schemas/report.schema.json" "$T/last.out" <<'PY'
import csv, json, sys, xml.dom.minidom
import jsonschema
run, schema_path, stdout = sys.argv[1:4]
rep = json.load(open(run + "/report.json"))
jsonschema.validate(rep, json.load(open(schema_path)))
assert json.load(open(stdout)) == rep, "--print json differs from report.json"
shapes = [s["shape"] for s in rep["shapes"]]
assert shapes == ["m32_n32_k32", "m96_n64_k80"], shapes
doc = xml.dom.minidom.parse(run + "/report.svg")
bars = [r for r in doc.getElementsByTagName("rect") if r.getAttribute("class") == "bar"]
assert len(bars) == len(shapes), f"{len(bars)} bars for {len(shapes)} shapes"
md = open(run + "/report.md").read()
assert md.index("Geomean speedup") < md.index("| shape |"), "summary is not above the table"
assert "<details><summary>Provenance</summary>" in md, "provenance is not folded"
assert rep["provenance"]["result_set_digest"] in md, "markdown lacks the result-set digest"
rows = list(csv.DictReader(open(run + "/report.csv", newline="")))
assert [r["shape"] for r in rows] == shapes, rows
print("formats ok")
PY
mkdir before && cp $R/report.* before/
expect_rc 0 "$ABH" report $R --quiet
for f in md json csv svg; do cmp -s before/report.$f $R/report.$f || fail "report.$f not reproducible"; done
expect_rc 0 "$ABH" verify $R
grep -q "$(jget $R/report.json 'j["provenance"]["result_set_digest"]')" "$T/last.out" || fail "verify digest differs from the report's"

# Swapped revisions: the naive kernel as candidate must never pass the gate. At 256^3 it is
# ~1.8x slower (at 32^3 the two kernels are too close to call, and the naive one can win); on a
# quiet machine that is a regression (exit 5), on one loaded so heavily that the arms cannot decide
# it (the test suite beside two busy loops and other builds: arms of the same code 5-40 % apart) it
# is undecided (exit 6), named on stderr. Exit 5 itself is tested deterministically in verdicts.sh.
cat > slow_grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m32_n32_k32", "params": { "m": 32, "n": 32, "k": 32 } },
  { "id": "m256_n256_k256", "params": { "m": 256, "n": 256, "k": 256 } } ] }
JSON
set +e
"$ABH" run --repo repo --baseline HEAD --candidate HEAD~1 --grid slow_grid.json --runs-root runs \
  --run-id slower "${FAST[@]}" --fail-on-regression --quiet --schedule abba --until-decided 2 \
  >"$T/last.out" 2>"$T/last.err"
rc=$?
set -e
case $rc in
  5) grep -q "regressed beyond the noise band" "$T/last.err" || fail "regression not explained" ;;
  6) grep -q "could not be decided" "$T/last.err" || fail "undecided shapes not explained" ;;
  *) cat "$T/last.err" >&2; fail "the naive kernel as candidate exited $rc, not 5 or 6" ;;
esac
expect_rc 0 "$ABH" report runs/slower --quiet
expect_rc $rc "$ABH" report runs/slower --quiet --fail-on-regression

# A missing result makes the sweep incomplete (exit 4), and the report marks the shape failed.
rm runs/slower/results/m32_n32_k32/B1.json
expect_rc 4 "$ABH" report runs/slower --quiet
[ "$(jget runs/slower/report.json '[s["verdict"] for s in j["shapes"]][0]')" = failed ] || fail "missing arm not marked failed"
expect_rc 2 "$ABH" run --repo repo --baseline HEAD --candidate HEAD --grid grid.json --print yaml
pass "reports and exit codes"
