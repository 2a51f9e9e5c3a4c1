# A variants file end to end on the CPU example: one run compares the naive kernel (the baseline)
# with the blocked kernel built at -O1 and at -O3 (two variants of one revision, built and cached
# separately through the manifest's ${OPT}), every shape measuring all three in one interleaved
# block; the reports show a matrix of shapes x candidates; a result moved to another variant's
# path is refused by name; bad files are refused naming the variant and the field; the gate
# judges the candidates of --gate-on.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
# The example's own variants file: naive (HEAD~1), blocked at -O1 and at -O3 (HEAD).
cp "$ABH_SOURCE_DIR/examples/cpu-gemm/variants.json" variants.json
expect_rc 0 "$ABH" run --repo repo --variants variants.json --grid grid.json --runs-root runs \
  --run-id v "${FAST[@]}" --color never
out=$(cat "$T/last.out")
echo "$out"
R=runs/v
# The plan: the baseline first, each build setting substituted into its recipe and in its key.
[ "$(jget $R/plan.json "' '.join(v['name'] for v in j['variants'])")" = "naive blocked_o1 blocked_o3" ] \
  || fail "plan variants: $(jget $R/plan.json "[v['name'] for v in j['variants']]")"
[ "$(jget $R/plan.json "j['variants'][1]['recipe']['argv'][1] + ' ' + j['variants'][2]['recipe']['argv'][1]")" = "-O1 -O3" ] \
  || fail "the build settings are not in the recipes"
[ "$(jget $R/plan.json "j['variants'][2]['build']['OPT']")" = "-O3" ] || fail "plan lacks build settings"
[ "$(jget $R/plan.json "j['variants'][0]['recipe']['argv'][1]")" = "-O2" ] || fail "default OPT not used"
[ "$(jget $R/plan.json "len({v['build_cache_key'] for v in j['variants']})")" = 3 ] \
  || fail "one revision at two settings shares a build cache key"
[ "$(jget $R/plan.json "j['variants'][1]['source']['commit'] == j['variants'][2]['source']['commit']")" = True ] \
  || fail "the two blocked variants are not one commit"
# Every shape measures every variant in one block, the baseline first and last.
for s in m32_n32_k32 m96_n64_k80; do
  arms=$(jget $R/plan.json "' '.join(t['arm'] for t in j['tasks'] if t['shape'] == '$s')")
  [ "$arms" = "naive.1 blocked_o1.1 blocked_o3.1 naive.2" ] || fail "$s arms: $arms"
  for a in $arms; do [ -f $R/results/$s/$a.json ] || fail "missing result $s/$a"; done
done
[ "$(jget $R/results/m96_n64_k80/blocked_o3.1.json 'j["invocation"]["variant"]')" = blocked_o3 ] \
  || fail "the result does not name its variant"
# The reports: a matrix of shapes x candidates in each format, each candidate's own report.
grep -q "blocked_o1" <<<"$out" && grep -q "blocked_o3" <<<"$out" || fail "terminal matrix lacks a candidate"
grep -q "Bonferroni over 2 candidate" <<<"$out" || fail "terminal does not state the control"
grep -q "blocked_o3 vs naive: geomean" <<<"$out" || fail "terminal lacks a candidate's geomean"
python3 - "$R" <<'PY' || fail "report.json is not a variants report"
import json, sys
rep = json.load(open(sys.argv[1] + "/report.json"))
assert rep["kind"] == "variants" and rep["baseline"] == "naive", rep.keys()
assert [c["name"] for c in rep["candidates"]] == ["blocked_o1", "blocked_o3"]
assert abs(rep["comparison_confidence"] - (1 - 0.05 / 2)) < 1e-12, rep["comparison_confidence"]
for c in rep["candidates"]:
    r = c["report"]
    assert r["stats"]["confidence"] == rep["comparison_confidence"]
    assert sorted(s["shape"] for s in r["shapes"]) == ["m32_n32_k32", "m96_n64_k80"]
    for s in r["shapes"]:
        assert s["verdict"] != "failed", s
        assert [a["arm"] for a in s["arms"]] == ["naive.1", c["name"] + ".1", "naive.2"], s["arms"]
PY
grep -q "| \`m96_n64_k80\` |" $R/report.md || fail "report.md lacks the matrix row"
[ "$(grep -c "<details><summary>blocked.*o[13] against naive: the full report" $R/report.md)" = 2 ] \
  || fail "report.md lacks a candidate's report"
head -1 $R/report.pr.md | grep -q "abharness:pr" || fail "PR comment lacks its marker"
[ "$(wc -c <$R/report.pr.md)" -lt 65536 ] || fail "PR comment too long"
[ "$(grep -c ',naive,blocked_o' $R/report.csv)" = 4 ] || fail "report.csv lacks shape x candidate rows"
# The tidy CSV: each candidate's shape and arm rows under one header, its name in candidate_name,
# the columns those of a two-variant run's (the header is the same list).
python3 - $R "$ABH_SOURCE_DIR/docs/csv.md" <<'PY' || fail "report.tidy.csv (above)"
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/report.tidy.csv", newline="")))
documented = re.findall(r"^\| `([a-z_]+)` \| (?:all|shape rows|arm rows)", open(sys.argv[2]).read(), re.M)
assert list(rows[0].keys())[:len(documented)] == documented, list(rows[0].keys())
for name in ("blocked_o1", "blocked_o3"):
    mine = [r for r in rows if r["candidate_name"] == name]
    shapes = sorted(r["shape"] for r in mine if r["row"] == "shape")
    assert shapes == ["m32_n32_k32", "m96_n64_k80"], (name, shapes)
    arms = sorted((r["shape"], r["arm"], r["variant"]) for r in mine if r["row"] == "arm")
    assert len(arms) == 6 and {a[2] for a in arms} == {"baseline", "candidate"}, arms
    assert all(r["m"] for r in mine), "the grid parameters are columns"
assert len(rows) == 16, len(rows)
PY
# Every document against its schema: the plan and results with variant-named arms, report.json
# as a variants report, and each candidate's report as a report.
"$(schema_python)" - $R "$ABH_SOURCE_DIR/schemas" <<'PY' || fail "a document does not match its schema"
import glob, json, sys
from jsonschema import Draft202012Validator
run, schemas = sys.argv[1:3]
def check(name, doc, what):
    errs = list(Draft202012Validator(json.load(open(f"{schemas}/{name}.schema.json"))).iter_errors(doc))
    assert not errs, (what, [(list(e.absolute_path), e.message) for e in errs[:5]])
check("plan", json.load(open(run + "/plan.json")), "plan.json")
for p in glob.glob(run + "/results/*/*.json"):
    check("result", json.load(open(p)), p)
rep = json.load(open(run + "/report.json"))
check("variants-report", rep, "report.json")
for c in rep["candidates"]:
    check("report", c["report"], c["name"])
PY
expect_rc 0 "$ABH" verify $R
expect_rc 0 "$ABH" report $R --print csv --quiet
expect_rc 0 "$ABH" report $R --print tidy-csv --quiet
cmp -s "$T/last.out" $R/report.tidy.csv || fail "--print tidy-csv differs from report.tidy.csv"
# The formats a variants report does not have are refused by name.
expect_rc 2 "$ABH" report $R --print svg --quiet
grep -q "a run of a variants file reports as" "$T/last.err" || fail "--print svg not refused clearly"

# The same variants again: every build comes from the cache, each under its own key.
expect_rc 0 "$ABH" run --repo repo --variants variants.json --grid grid.json --runs-root runs \
  --run-id again "${FAST[@]}" --quiet
[ "$(grep -l "nothing was built" runs/again/variants/*/build.log | wc -l)" = 3 ] || fail "second run rebuilt"

# A result moved to another variant's path (o1's over o3's) is refused naming arm and variant.
cp -a $R "$T/moved"
cp "$T/moved/results/m32_n32_k32/blocked_o1.1.json" "$T/moved/results/m32_n32_k32/blocked_o3.1.json"
expect_rc 3 "$ABH" verify "$T/moved"
grep -qF "results/m32_n32_k32/blocked_o3.1.json: invocation (field 'invocation.arm'): expected blocked_o3.1, found blocked_o1.1" "$T/last.err" \
  || fail "moved result: the arm is not named: $(cat "$T/last.err")"
grep -qF "(field 'invocation.variant'): expected blocked_o3, found blocked_o1" "$T/last.err" \
  || fail "moved result: the variant is not named"
grep -qF "results/m32_n32_k32/blocked_o3.1.json: plugin-sha256" "$T/last.err" \
  || fail "moved result: the other variant's plugin is not named"

# The gate: with the -O3 build as the baseline, the naive kernel is slower on the larger shape;
# --gate-on judges the named candidate only, and a name that is no candidate is refused.
cat > gate.json <<'JSON'
{ "schema_version": 1, "baseline": "fast",
  "variants": [ { "name": "fast", "revision": "HEAD", "build": { "OPT": "-O3" } },
                { "name": "slow", "revision": "HEAD~1" },
                { "name": "same", "revision": "HEAD", "build": { "OPT": "-O3" } } ] }
JSON
cat > big.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m256_n256_k256", "params": { "m": 256, "n": 256, "k": 256 } } ] }
JSON
set +e
"$ABH" run --repo repo --variants gate.json --grid big.json --runs-root runs --run-id g \
  --min-samples 5 --min-time 0.05 --max-time 1 --until-decided 2 --quiet --gate-on slow >"$T/g.out" 2>"$T/g.err"
rc=$?
set -e
cat "$T/g.err"
[ $rc = 5 ] || [ $rc = 6 ] || fail "--gate-on slow: expected exit 5 (or 6 when undecided), got $rc"
grep -q "slow m256_n256_k256" "$T/g.err" || fail "the gate does not name the candidate and shape"
! grep -q "  same m256_n256_k256" "$T/g.err" || fail "the gate judged a candidate not named by --gate-on"
expect_rc 2 "$ABH" report runs/g --gate-on fast --quiet
grep -q "\-\-gate-on fast: not a candidate of this run (candidates: slow, same; the baseline fast is not gated)" "$T/last.err" \
  || fail "--gate-on of the baseline not refused clearly: $(cat "$T/last.err")"

# A tactic mode as a run setting: one build measured tuned and untuned in one run. The tactic is
# the harness's setting, never a plugin parameter: the plugin would refuse an unknown one.
cat > tactics.json <<'JSON'
{ "schema_version": 1, "baseline": "tuned",
  "variants": [ { "name": "tuned", "revision": "HEAD" },
                { "name": "untuned", "revision": "HEAD", "run": { "tactic": "default" } } ] }
JSON
expect_rc 0 "$ABH" run --repo repo --variants tactics.json --grid grid.json --runs-root runs \
  --run-id tactics "${FAST[@]}" --quiet
for f in runs/tactics/results/*/*.json; do
  choice=$(jget "$f" 'j["measurement"]["tactic_choice"]')
  case $(jget "$f" 'j["invocation"]["variant"]') in
    tuned) [ "$choice" = "only tactic" ] || fail "$f: tuned arm chose by '$choice'" ;;
    untuned) [ "$choice" = "default: the plugin's first tactic, not tuned" ] || fail "$f: untuned arm chose by '$choice'" ;;
  esac
  [ "$(jget "$f" '"tactic" in j["invocation"]["params"]')" = False ] || fail "$f: tactic passed to the plugin"
done
expect_rc 0 "$ABH" verify runs/tactics

# Bad files: refused before anything is built, naming the file, the variant and the field.
bad() {  # bad NAME JSON MESSAGE
  echo "$2" > "$1.json"
  local before; before=$(ls runs | wc -l)
  expect_rc 2 "$ABH" run --repo repo --variants "$1.json" --grid grid.json --runs-root runs "${FAST[@]}"
  grep -qF "$3" "$T/last.err" || fail "$1: expected '$3' in: $(cat "$T/last.err")"
  [ "$(ls runs | wc -l)" = "$before" ] || fail "$1 left a run directory"
}
bad dup '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD"},{"name":"a","revision":"HEAD~1"}]}' \
  "dup.json: /variants/1 (a): field 'name': 'a' names two variants"
bad nobase '{"schema_version":1,"baseline":"z","variants":[{"name":"a","revision":"HEAD"},{"name":"b","revision":"HEAD~1"}]}' \
  "field 'baseline': 'z' is not one of the variants (a, b)"
bad one '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD"}]}' \
  "2 to 16 variants"
bad field '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD","tactic":"x"},{"name":"b","revision":"HEAD~1"}]}' \
  "/variants/0"
bad path '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD"},{"name":"../b","revision":"HEAD~1"}]}' \
  "/variants/1/name"
bad rev '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD"},{"name":"b","revision":"no-such-branch"}]}' \
  "variant b: field 'revision'"
bad setting '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD"},{"name":"b","revision":"HEAD","build":{"OPTT":"-O3"}}]}' \
  "b (HEAD): "
grep -qF "field build.OPTT) is not declared by this target (it declares: OPT)" "$T/last.err" \
  || fail "an undeclared build setting is not named"
bad tactic '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD"},{"name":"b","revision":"HEAD","run":{"tactic":7}}]}' \
  "/variants/1/run/tactic"
# A setting with a space reaches the compiler as one argument (no shell): the failure says so.
echo '{"schema_version":1,"baseline":"a","variants":[{"name":"a","revision":"HEAD"},{"name":"b","revision":"HEAD","build":{"OPT":"-O3 -g"}}]}' > space.json
expect_rc 1 "$ABH" run --repo repo --variants space.json --grid grid.json --runs-root runs --run-id space "${FAST[@]}"
grep -qF "the b variant: build of HEAD" "$T/last.err" || fail "a failed build does not name its variant"
grep -qF "note: build setting OPT = '-O3 -g' holds a space" "$T/last.err" \
  || fail "a build setting with a space is not named: $(cat "$T/last.err")"
rm -rf runs/space
expect_rc 2 "$ABH" run --repo repo --variants variants.json --baseline HEAD --grid grid.json
grep -q "leave --baseline/--candidate out" "$T/last.err" || fail "--variants with --baseline not refused"
expect_rc 2 "$ABH" run --repo repo --baseline HEAD --grid grid.json
grep -q "\-\-candidate is required" "$T/last.err" || fail "a missing --candidate is not named"
pass "variants: three variants in one run, cached builds per setting, matrix reports, a moved result refused, bad files named"
