# A variants run SIGKILLed in the middle of a block (some of a shape's arms measured, not all),
# then resumed: no worker outlives the kill, the directory validates as incomplete (never as a
# provenance failure), resume measures only the missing arms of every variant, and the finished
# run verifies with each result of before the kill kept byte for byte.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
four_shape_grid
cat > variants.json <<'JSON'
{ "schema_version": 1, "baseline": "naive",
  "variants": [
    { "name": "naive", "revision": "HEAD~1" },
    { "name": "o1", "revision": "HEAD", "build": { "OPT": "-O1" } },
    { "name": "o3", "revision": "HEAD", "build": { "OPT": "-O3" } } ] }
JSON
R="$T/runs/k"
"$ABH" run --repo repo --variants variants.json --grid grid.json --runs-root "$T/runs" \
  --run-id k "${SLOW[@]}" --quiet --color never >"$T/bg.out" 2>"$T/bg.err" &
pid=$!
wait_for_plan $pid "$R" "$T/bg.err"
# Mid-block: the second shape has some of its four arms (naive.1 o1.1 o3.1 naive.2), not all.
for _ in $(seq 1 3000); do
  n=$(ls "$R/results/s64" 2>/dev/null | grep -c '\.json$' || true)
  [ "$n" -ge 2 ] && break
  kill -0 $pid 2>/dev/null || fail "the run ended before it could be killed: $(cat "$T/bg.err")"
  sleep 0.02
done
kill -KILL $pid
wait $pid 2>/dev/null || true
n=$(ls "$R/results/s64" | grep -c '\.json$' || true)
[ "$n" -ge 2 ] && [ "$n" -lt 4 ] || fail "the kill did not land mid-block: s64 has $n of 4 results"
sleep 0.3
! pgrep -f "abharness-worker run --run-dir $R " >/dev/null || fail "a worker outlived the kill"
before=$(cd "$R" && for f in results/*/*.json; do echo "$f $(jget "$f" 'j["payload_sha256"]')"; done)
expect_rc 4 "$ABH" verify "$R"
expect_rc 0 "$ABH" resume "$R" --quiet
expect_rc 0 "$ABH" verify "$R"
while read -r f digest; do
  [ "$(jget "$R/$f" 'j["payload_sha256"]')" = "$digest" ] || fail "$f was measured again"
done <<<"$before"
for s in s40 s64 s80 s96; do
  [ "$(ls "$R/results/$s" | tr '\n' ' ')" = "naive.1.json naive.2.json o1.1.json o3.1.json " ] \
    || fail "$s results after resume: $(ls "$R/results/$s")"
done
[ "$(jget "$R/report.json" '[c["name"] for c in j["candidates"]]')" = "['o1', 'o3']" ] \
  || fail "the resumed run's report is not the variants report"
# Resume with the run's flags: another variants file is refused by name.
sed 's/-O1/-O2/' variants.json >other.json
expect_rc 2 "$ABH" run --resume "$R" --repo repo --variants other.json --grid grid.json "${SLOW[@]}"
grep -q "the plan compares the variants naive 'HEAD~1', o1 'HEAD', o3 'HEAD'" "$T/last.err" \
  || fail "resume with another variants file: $(cat "$T/last.err")"
pass "variants: killed mid-block, resumed, every arm measured once"
