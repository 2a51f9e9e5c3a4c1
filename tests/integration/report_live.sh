# What the commands over a run may write, and where. A `report` of a run that another abharness is
# still measuring prints the results so far and writes nothing into it (a report begun before the
# run ended and written after would replace the run's own); `verify` of a live run says that the
# arms are being measured, not that resume measures them. No command's output may land inside a
# run directory other than a report's own: `export -o runs/r/plan.json` used to destroy the plan.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid grid.json
common=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs --quiet
  --color never)

# --- a live run: each arm samples for 1 s ---------------------------------------------------------
"$ABH" run "${common[@]}" --min-samples 5 --min-time 1 --max-time 2 --warmup 1 --until-decided 0 \
  --run-id live >live.out 2>live.err &
p=$!
wait_until 120 bash -c 'ls runs/live/results/*/*.json >/dev/null 2>&1' || fail "the run never measured"
expect_rc 4 "$ABH" report runs/live
grep -q "is live (another abharness is measuring it): this report of its results so far is printed, not written" \
  "$T/last.err" || fail "report of a live run: $(cat "$T/last.err")"
grep -q "arm(s) without a result yet: the run is still measuring" "$T/last.err" ||
  fail "report of a live run called its arms failed: $(cat "$T/last.err")"
! grep -q "abharness resume" "$T/last.err" || fail "report of a live run said to resume it"
grep -q "m32_n32_k32" "$T/last.out" || fail "report of a live run printed no table: $(cat "$T/last.out")"
[ ! -e runs/live/report.md ] || fail "report wrote into a live run"
expect_rc 4 "$ABH" verify runs/live
grep -q "the run is live: another abharness is measuring them now" "$T/last.out" ||
  fail "verify of a live run: $(cat "$T/last.out")"
wait $p || fail "the run failed: $(cat live.err)"
expect_rc 0 "$ABH" verify runs/live
digest=$(sed -n 's/^result-set digest: //p' "$T/last.out")
grep -qF "$digest" runs/live/report.md || fail "the run's own report does not quote its digest $digest"
pass "a live run's report is printed, not written; its own report quotes the final digest"

# --- outputs inside run directories ---------------------------------------------------------------
expect_rc 0 "$ABH" run "${common[@]}" "${FAST[@]}" --run-id other
cp runs/live/plan.json plan.before
for cmd in "export runs/other --format bmf -o runs/live/plan.json" "report runs/other --out runs/live" \
  "report runs/other --out runs/other/sub" "compare runs/live runs/other --out runs/live/results" \
  "history runs/live runs/other --out runs/live/history" "grid --model gemma-2-9b -o runs/live/g.json"; do
  # shellcheck disable=SC2086
  expect_rc 2 "$ABH" $cmd
  grep -q "it is inside the run directory .*/runs/\(live\|other\), which holds only what its run writes" \
    "$T/last.err" || fail "$cmd: $(cat "$T/last.err")"
done
cmp -s plan.before runs/live/plan.json || fail "the plan was overwritten"
expect_rc 0 "$ABH" verify runs/live
expect_rc 0 "$ABH" report runs/other --out runs/other --print json
expect_rc 0 "$ABH" export runs/other --format bmf -o exported.json
pass "no command writes into a run directory but a report into its own run"

# --- `compare runs/*` and `history runs/*` over a runs root that holds more than runs -------------
mkdir -p runs/bis/probes runs/failed/variants
echo '{}' >runs/bis/bisect.json  # what marks a bisect directory
expect_rc 0 "$ABH" compare runs/* --color never
grep -q "compare: left out runs/bis: a bisect directory (its probes are runs under runs/bis/probes)" \
  "$T/last.err" || fail "compare runs/*: $(cat "$T/last.err")"
grep -q "compare: left out runs/failed: it holds neither plan.json nor results/" "$T/last.err" ||
  fail "compare runs/*: $(cat "$T/last.err")"
expect_rc 0 "$ABH" history runs/* --out hist
[ -s hist/index.html ] || fail "history runs/* wrote no page"
expect_rc 2 "$ABH" compare runs/bis runs/failed runs/live
grep -q "give at least two run directories" "$T/last.err" || fail "one run left: $(cat "$T/last.err")"
pass "compare and history over runs/* leave out what is not a run, saying so"
