# Workers started ahead (--start-ahead N: 1 by default for GPU plugins, 8 for Python ones; 2 asked
# for here on the CPU): a lane starts the next N arms' workers while the current arm measures;
# each reads its plan and loads its plugin, and waits on its stdin for its turn, which comes when
# the arm before it has ended. Proves that
#  - three workers of the run are alive at once (one measuring, two started ahead), and every
#    recorded arm waited for its turn (waited_s > 0, median about an arm's length) while its
#    ready_s leaves the wait out;
#  - killing the orchestrator while a worker waits for its turn leaves no worker behind, and a
#    resume finishes the sweep without measuring any result twice; everything verifies;
#  - the plan records start_ahead, and `run --resume` with another --start-ahead is refused;
#  - a worker started with --ahead whose stdin is not abharness's socket refuses (exit 2).
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
four_shape_grid
R="$T/runs/a"
workers_of_run() { pgrep -f "abharness-worker run --run-dir $R " || true; }
flags=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root "$T/runs"
  "${SLOW[@]}" --quiet --color never)

"$ABH" run "${flags[@]}" --run-id a --start-ahead 2 >"$T/run.out" 2>"$T/run.err" &
orch=$!
wait_for_plan $orch "$R" "$T/run.err"
[ "$(jget "$R/plan.json" 'j["schedule"]["start_ahead"]')" = 2 ] || fail "plan: start_ahead not 2"

# Three workers of the run at once: the measuring one and the next two, started ahead. Let the
# sweep record a few arms, then kill the orchestrator while the next workers wait for their turn.
seen_two=0
for _ in $(seq 1 600); do
  if [ "$(workers_of_run | wc -l)" -ge 3 ]; then
    seen_two=1
    [ "$(ls "$R"/results/*/*.json 2>/dev/null | wc -l)" -ge 3 ] && break
  fi
  kill -0 $orch 2>/dev/null || break
  sleep 0.05
done
[ $seen_two = 1 ] || fail "never saw two workers started ahead beside the measuring one"
pass "two workers are started ahead while the arm before them measures"
kill -KILL $orch 2>/dev/null || fail "the sweep ended before it could be killed"
wait $orch 2>/dev/null || true
sleep 0.3
[ -z "$(workers_of_run)" ] || fail "worker(s) $(workers_of_run) outlived the killed orchestrator"
pass "killing the orchestrator leaves no worker, waiting or measuring, behind"
before=$(python3 - "$R" <<'PY'
import glob, json, sys
for p in sorted(glob.glob(sys.argv[1] + "/results/*/*.json")):
    j = json.load(open(p))
    print(p, j["payload_sha256"], j["pid"])
PY
)
[ -n "$before" ] || fail "no result was written before the kill"

expect_rc 2 "$ABH" run "${flags[@]}" --resume "$R" --start-ahead 0
grep -q -- "--start-ahead 0 differs from the plan's start_ahead 2" "$T/last.err" ||
  fail "resume with another --start-ahead: $(cat "$T/last.err")"
expect_rc 2 "$ABH" run "${flags[@]}" --run-id b --start-ahead 17
grep -q -- "--start-ahead 17: use the number of workers a lane starts ahead (0 to 16), or auto" \
  "$T/last.err" || fail "--start-ahead 17: $(cat "$T/last.err")"
pass "a resume with another --start-ahead, and an out-of-range one, are refused"

expect_rc 0 "$ABH" resume "$R" --quiet
expect_rc 0 "$ABH" verify "$R"
grep -q "verified 12 of 12" "$T/last.out" || fail "verify: $(cat "$T/last.out")"
while read -r path digest pid; do
  [ "$(jget "$path" 'j["payload_sha256"]') $(jget "$path" 'j["pid"]')" = "$digest $pid" ] ||
    fail "$path was measured again after the kill"
done <<<"$before"
pass "the resumed sweep verifies and kept every result measured before the kill"

python3 - "$R" <<'PY' || fail "waits"
import glob, json, statistics, sys
rs = [json.load(open(p))["measurement"] for p in glob.glob(sys.argv[1] + "/results/*/*.json")]
waited = [m["waited_s"] for m in rs]
print("waited_s:", sorted(round(w, 3) for w in waited))
# Every recorded arm follows another worker of its lane (an arm, or the lane's warm-up), and arms
# here measure for 0.4 s or more: each waited, typically most of that.
assert all(w > 0 for w in waited), "an arm started ahead did not wait for its turn"
assert statistics.median(waited) >= 0.1, f"median wait {statistics.median(waited):.3f} s"
assert all(m["ready_s"] < 5 for m in rs), "ready_s counts the wait"
PY
pass "every arm waited for its turn; ready_s leaves the wait out"

expect_rc 2 "$WORKER" run --run-dir "$R" --shape s40 --arm A1 --ahead </dev/null
grep -q "stdin must be the socket abharness gives a worker it starts ahead" "$T/last.err" ||
  fail "--ahead without the socket: $(cat "$T/last.err")"
expect_rc 0 "$ABH" verify "$R"
pass "a worker started with --ahead by hand refuses"
