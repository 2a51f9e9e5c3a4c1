# Two runs started together on one machine measure one after the other, never side by side
# (orchestrator/measuring_lock.hpp): the second says which run it waits for, every arm of one
# ends before the first arm of the other starts, and both verify. A run killed while it measures
# leaves no lock behind: the next one measures at once.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid grid.json
export ABH_LOCK_DIR="$T/shared-locks"  # both runs of this test share it, as two users' would
args=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs
  "${FAST[@]}" --quiet --color never)
# Run one's arms sample for 2 s each (about 12 s in all); run two starts once one has written a
# result, so it has its plan (its build cached by then) while one still measures.
slow=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs --quiet
  --color never --min-samples 5 --min-time 2 --max-time 4 --warmup 1 --until-decided 0)
"$ABH" run "${slow[@]}" --run-id one >one.out 2>one.err &
p1=$!
wait_until 120 bash -c 'ls runs/one/results/*/*.json >/dev/null 2>&1' || fail "run one never measured"
"$ABH" run "${args[@]}" --run-id two >two.out 2>two.err &
p2=$!
wait $p1 || fail "run one failed: $(cat one.err)"
wait $p2 || fail "run two failed: $(cat two.err)"
grep -h "waiting for run .*/runs/one (pid $p1), which is measuring on cpu-" two.err >waited ||
  fail "run two did not say it waited for run one: $(cat two.err)"
python3 - runs/one runs/two <<'PY' || fail "the two runs measured side by side (above)"
import glob, json, sys
spans = {}
for run in sys.argv[1:]:
    rs = [json.load(open(f)) for f in glob.glob(run + "/results/*/*.json")]
    assert len(rs) == 6, (run, len(rs))
    spans[run] = (min(r["started_at"] for r in rs), max(r["finished_at"] for r in rs))
(a0, a1), (b0, b1) = spans.values()
print(spans)
assert a1 < b0 or b1 < a0, "arms overlap in time"
PY
for r in one two; do expect_rc 0 "$ABH" verify runs/$r; done
pass "two runs at once: one waits for the other ($(cut -c1-80 waited))"

# A compile waits for a CPU measurement on this machine: run four's compiler (a wrapper first on its
# PATH, so its builds are not the cached ones) starts only after run three's last arm has ended.
mkdir wrap
cat >wrap/c++ <<EOF
#!/bin/sh
python3 -c 'import datetime; print(datetime.datetime.now(datetime.timezone.utc).isoformat())' \
  >>"$PWD/compiles"
exec "$(command -v c++)" "\$@"
EOF
chmod +x wrap/c++
"$ABH" run "${slow[@]}" --run-id three >three.out 2>three.err &
p3=$!
wait_until 120 bash -c 'ls runs/three/results/*/*.json >/dev/null 2>&1' || fail "run three never measured"
PATH="$PWD/wrap:$PATH" "$ABH" run "${args[@]}" --run-id four >four.out 2>four.err &
p4=$!
wait $p3 || fail "run three failed: $(cat three.err)"
wait $p4 || fail "run four failed: $(cat four.err)"
grep -q "waiting for run .*/runs/three (pid $p3), which is measuring on this machine's CPUs; this run builds when it has finished" \
  four.err || fail "run four did not say its build waited for run three: $(cat four.err)"
python3 - runs/three compiles <<'PY' || fail "run four compiled beside run three's arms (above)"
import datetime, glob, json, sys
ends = [json.load(open(f))["finished_at"] for f in glob.glob(sys.argv[1] + "/results/*/*.json")]
last = max(datetime.datetime.fromisoformat(e.replace("Z", "+00:00")) for e in ends)
compiles = [datetime.datetime.fromisoformat(l.strip()) for l in open(sys.argv[2])]
print("last arm of three", last, "compiles of four", compiles)
assert len(ends) == 6 and len(compiles) == 2, (len(ends), compiles)
assert min(compiles) > last, "a compile started before the last arm ended"
PY
for r in three four; do expect_rc 0 "$ABH" verify runs/$r; done
pass "a compile waits for a CPU measurement on this machine: $(grep -c . compiles) compiles after its last arm"

# A holder killed by SIGKILL while it measures releases its lock with its death.
"$ABH" run "${args[@]}" --run-id killed >killed.out 2>killed.err &
p=$!
wait_until 60 bash -c 'ls runs/killed/results/*/*.json >/dev/null 2>&1' || fail "run killed never measured"
kill -9 $p
wait $p 2>/dev/null || true
start=$(date +%s)
expect_rc 0 timeout 120 "$ABH" run "${args[@]}" --run-id after
! grep -q "waiting for" "$T/last.err" || fail "waited for a dead run: $(cat "$T/last.err")"
pass "a run killed while measuring leaves no lock: the next measured at once ($(($(date +%s) - start)) s)"

# --share-host: runs given it measure side by side on their own CPUs; a run without it still has
# the machine to itself. Run five (share, CPU 0) samples for minutes and is killed once run seven
# has said it waits for it: its length only keeps it measuring while six and seven start.
long=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs --quiet
  --color never --min-samples 5 --min-time 30 --max-time 30 --warmup 1 --until-decided 0)
"$ABH" run "${long[@]}" --share-host --cpus 0 --run-id five >five.out 2>five.err &
p5=$!
wait_for_plan $p5 runs/five five.err
wait_until 120 bash -c 'ls runs/five/logs/*/A1*.out >/dev/null 2>&1' || fail "run five never measured"
expect_rc 0 "$ABH" run "${args[@]}" --share-host --cpus 1 --run-id six
! grep -q "waiting for" "$T/last.err" || fail "a sharing run waited for another: $(cat "$T/last.err")"
kill -0 $p5 2>/dev/null || fail "run five ended before run six had measured: $(cat five.err)"
[ "$(jget runs/six/plan.json 'j["schedule"]["share_host"]')" = True ] || fail "plan lacks share_host"
grep -q "measured with --share-host: other runs given it may have measured" runs/six/report.md ||
  fail "run six's report does not say it shared the host: $(cat runs/six/report.md)"
pass "two --share-host runs on CPUs 0 and 1 measure side by side, and the report says so"

"$ABH" run "${args[@]}" --cpus 1 --run-id seven >seven.out 2>seven.err &
p7=$!
wait_until 120 grep -q "waiting for run .*/runs/five (pid $p5), which is measuring on this machine's CPUs" seven.err ||
  fail "a run without --share-host did not wait for the sharing one: $(cat seven.err)"
[ -z "$(ls runs/seven/results 2>/dev/null)" ] || fail "run seven measured beside a sharing run"
kill -9 $p5
wait $p5 2>/dev/null || true
wait $p7 || fail "run seven failed: $(cat seven.err)"
grep -q "measured with --share-host" runs/seven/report.md && fail "run seven's report says it shared"
pass "a run without --share-host waits for a sharing one, and measures once it is gone"

expect_rc 2 "$ABH" run "${args[@]}" --resume runs/seven --share-host
grep -q -- "--share-host differs from the plan's host lock held alone" "$T/last.err" ||
  fail "a resume adding --share-host was not refused: $(cat "$T/last.err")"
pass "a resume cannot add --share-host to a plan made without it"
