# The main job end to end on the CPU example: a real two-commit repository, A1/B/A2 per shape in
# separate worker processes, provenance, the table; then the same comparison again builds nothing.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat > grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m48_n48_k48", "params": { "m": 48, "n": 48, "k": 48 } },
  { "id": "m256_n256_k256", "params": { "m": 256, "n": 256, "k": 256 } } ] }
JSON
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id first --min-samples 5 --min-time 0.05 --max-time 1 --color never
out=$(cat "$T/last.out"); err=$(cat "$T/last.err")
echo "$out"
grep -q "m256_n256_k256" <<<"$out" || fail "table lacks the shape row"
grep -qi "geomean" <<<"$out" || fail "table lacks the geomean"
R=runs/first
[ -f $R/plan.json ] || fail "no plan.json"
# The first block's arms: A1, B, A2 (B1 when --until-decided auto planned more blocks, which run
# only where the results call for them).
for s in m48_n48_k48 m256_n256_k256; do
  arms=$(jget $R/plan.json "' '.join(t['arm'] for t in j['tasks'] if t['shape'] == '$s' and t['round'] == 0)")
  [ "$(wc -w <<<"$arms")" = 3 ] || fail "$s: the first block is not A/B/A: $arms"
  for a in $arms; do
    [ -f $R/results/$s/$a.json ] || fail "missing result $s/$a"
    [ -f $R/logs/$s/$a.out ] && [ -f $R/logs/$s/$a.err ] || fail "missing logs $s/$a"
    # The worker read only its own entries of the plan the run wrote (`run` does not read its
    # plan back, so this is where a plan that does not read as written would show).
    grep -q "plan read in .* s: the arm's entries of" $R/logs/$s/$a.out ||
      fail "$s/$a: the worker did not read its entries of the plan: $(grep 'plan read' $R/logs/$s/$a.out)"
  done
  pids=$(for a in $arms; do jget $R/results/$s/$a.json 'j["pid"]'; done | sort -u | wc -l)
  [ "$pids" = 3 ] || fail "$s: the three arms were not measured by three processes"
done
# Baseline and candidate are what the plan resolved, and the plan names the commits.
base=$(git -C repo rev-parse HEAD~1); cand=$(git -C repo rev-parse HEAD)
[ "$(jget $R/plan.json 'j["variants"][0]["source"]["commit"]')" = "$base" ] || fail "baseline commit"
[ "$(jget $R/plan.json 'j["variants"][1]["source"]["commit"]')" = "$cand" ] || fail "candidate commit"
B=$(jget $R/plan.json "[t['arm'] for t in j['tasks'] if t['variant'] == 'candidate'][0]")
[ "$(jget $R/results/m256_n256_k256/$B.json 'j["measurement"]["kernel_names"] or j["measurement"]["tactic"]')" = "blocked-ikj-64" ] \
  || fail "candidate arm did not run the blocked kernel"
# Which kernel is faster is not asserted here: beside busy loops on a 2-vCPU machine the blocked
# kernel's lead at 256^3 fell from ~1.8x to 1.1x (it shares a core with the loops), so a speed
# check here would test the machine. Verdicts are tested on planted results (verdicts.sh) and the
# regression gate on the naive kernel (reports.sh). Here: every shape has a verdict in the report.
python3 - "$R" <<'PY' || fail "the report lacks a verdict per shape"
import json, sys
rep = json.load(open(sys.argv[1] + "/report.json"))
assert sorted(s["shape"] for s in rep["shapes"]) == ["m256_n256_k256", "m48_n48_k48"], rep["shapes"]
assert all(s["verdict"] for s in rep["shapes"]), [s["verdict"] for s in rep["shapes"]]
PY
# The user's repository was not touched.
[ -z "$(git -C repo status --porcelain)" ] || fail "the user's work tree changed"
[ "$(git -C repo rev-parse HEAD)" = "$cand" ] || fail "HEAD moved"
# Same comparison again: both builds come from the cache.
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id second --min-samples 5 --min-time 0.05 --max-time 1 --quiet
[ "$(grep -l "nothing was built" runs/second/variants/*/build.log | wc -l)" = 2 ] || fail "second run rebuilt"
grep -q "nothing built" "$T/last.err" || fail "second run did not say it reused the builds"
pass "demo A/B/A"
