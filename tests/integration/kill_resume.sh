# Crash safety of a real sweep: the orchestrator is SIGKILLed at random points (0.05..2 s after it
# starts, up to 10 times), and `abharness resume` continues each time. Proves that
#  - after every kill the run directory is never corrupt (verify exits 0 or 4, never 3);
#  - no worker outlives its killed orchestrator (none is left a moment after the kill);
#  - a valid result is never re-measured: every result file seen after any kill is present,
#    byte-identical in payload digest and worker pid, at the end;
#  - the sweep ends complete and valid (resume exit 0, verify exit 0), every arm by its own process;
#  - two orchestrators cannot share a run directory (the second gets exit 2 and the lock message);
#  - Ctrl-C (SIGINT) ends a resume by the signal, after it printed the command that goes on.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
four_shape_grid
R="$T/runs/k"
RANDOM=$$ # a different kill pattern each run; the seed is printed for reproduction
echo "kill pattern seed: $$"

ledger="$T/ledger"
: >"$ledger"
# Appends "path digest pid" for every result file present now.
snapshot() {
  python3 - "$R" >>"$ledger" <<'PY'
import glob, json, os, sys
run = sys.argv[1]
for p in sorted(glob.glob(run + "/results/*/*.json")):
    j = json.load(open(p))
    print(os.path.relpath(p, run), j["payload_sha256"], j["pid"])
PY
}

workers_of_run() { pgrep -f "abharness-worker run --run-dir $R " || true; }

# After a kill: no worker of this run may survive, and the directory must validate (complete or
# incomplete, never a provenance failure).
after_kill() {
  sleep 0.3
  local left
  left=$(workers_of_run)
  [ -z "$left" ] || fail "worker(s) $left outlived the killed orchestrator"
  set +e
  "$ABH" verify "$R" >"$T/verify.out" 2>"$T/verify.err"
  local rc=$?
  set -e
  [ "$rc" = 0 ] || [ "$rc" = 4 ] || { cat "$T/verify.err" >&2; fail "verify after kill exited $rc"; }
  snapshot
}

# kill_after DELAY CMD...: starts CMD in the background, SIGKILLs it after DELAY seconds unless it
# ended first. Sets `ended` to its exit code, or "killed".
kill_after() {
  local delay=$1; shift
  "$@" >>"$T/bg.out" 2>>"$T/bg.err" &
  local pid=$!
  sleep "$delay"
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    ended=killed
  else
    set +e; wait "$pid"; ended=$?; set -e
  fi
}

# The builds go first and uninterrupted (a run killed before its plan exists cannot be resumed,
# by design); then the first sweep is killed as soon as the plan is written.
"$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root "$T/runs" \
  --run-id k "${SLOW[@]}" --quiet --color never >>"$T/bg.out" 2>>"$T/bg.err" &
first=$!
wait_for_plan $first "$R" "$T/bg.err"
sleep 0.$((RANDOM % 9 + 1))
kill -KILL $first 2>/dev/null || fail "the first sweep ended before it could be killed"
wait $first 2>/dev/null || true
kills=1
after_kill

# Ctrl-C (SIGINT) ends a resume at once, by the signal, after it printed how to go on.
"$ABH" resume "$R" --quiet >"$T/int.out" 2>"$T/int.err" &
interrupted=$!
for _ in $(seq 1 250); do grep -q "^resume k:" "$T/int.err" 2>/dev/null && break; sleep 0.02; done
kill -INT $interrupted 2>/dev/null || fail "the resume ended before it could be interrupted"
set +e; wait $interrupted; rc=$?; set -e
[ "$rc" = 130 ] || fail "an interrupted resume exited $rc, not by its SIGINT (130): $(cat "$T/int.err")"
grep -qF "abharness: interrupted; the results written so far are kept: \`abharness resume $R\` measures the rest" "$T/int.err" ||
  fail "no resume hint after SIGINT: $(cat "$T/int.err")"
kills=$((kills + 1))
after_kill
pass "SIGINT ends a resume at once, with the command that goes on"

lock_checked=0
for i in $(seq 1 9); do
  delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.05 + (r % 196) / 100 }')
  if [ $lock_checked = 0 ] && [ "$i" -ge 3 ]; then
    # A second orchestrator while one is running: refused before it touches anything.
    "$ABH" resume "$R" --quiet >"$T/holder.out" 2>"$T/holder.err" &
    holder=$!
    # It holds the lock once it says what it resumes.
    for _ in $(seq 1 100); do grep -q "^resume k:" "$T/holder.err" 2>/dev/null && break; sleep 0.02; done
    if kill -0 $holder 2>/dev/null; then
      expect_rc 2 "$ABH" resume "$R"
      grep -q "another abharness is writing $R" "$T/last.err" || fail "lock message: $(cat "$T/last.err")"
      lock_checked=1
      pass "a second resume of a running sweep is refused"
    fi
    kill -KILL $holder 2>/dev/null || true
    wait $holder 2>/dev/null || true
    kills=$((kills + 1))
    after_kill
    continue
  fi
  kill_after "$delay" "$ABH" resume "$R" --quiet
  echo "resume $i: ${ended} after ${delay} s"
  [ "$ended" = killed ] || { [ "$ended" = 0 ] && break; } || fail "resume exited $ended: $(tail -5 "$T/bg.err")"
  kills=$((kills + 1))
  after_kill
done
[ $lock_checked = 1 ] || fail "the lock was never checked (the sweep finished too early)"

# Finish: one last resume runs whatever is left, then everything must verify.
expect_rc 0 "$ABH" resume "$R" --quiet
expect_rc 0 "$ABH" verify "$R"
grep -q "verified 12 of 12" "$T/last.out" || fail "final verify: $(cat "$T/last.out")"
[ -z "$(workers_of_run)" ] || fail "workers left after the final resume"

# No valid result was measured twice: everything any snapshot saw is still there, unchanged.
python3 - "$R" "$ledger" <<'PY'
import glob, json, os, sys
run, ledger = sys.argv[1], sys.argv[2]
final = {}
for p in glob.glob(run + "/results/*/*.json"):
    j = json.load(open(p))
    final[os.path.relpath(p, run)] = (j["payload_sha256"], j["pid"])
seen = {}
for line in open(ledger):
    path, digest, pid = line.split()
    if seen.setdefault(path, (digest, int(pid))) != (digest, int(pid)):
        sys.exit(f"FAIL: {path} changed between two kills: it was measured twice")
for path, v in seen.items():
    if final.get(path) != v:
        sys.exit(f"FAIL: {path} was {v} after a kill, {final.get(path)} at the end: re-measured")
pids = [v[1] for v in final.values()]
if len(set(pids)) != len(pids):
    sys.exit("FAIL: two arms share a worker pid")
print(f"{len(seen)} results seen before the end survived unchanged; {len(final)} at the end")
PY
pass "survived $kills SIGKILLs with no re-measured result and no stray worker"

# SIGTERM while the run builds, before its plan: nothing was measured, and the run says what to
# remove; after that the same --run-id starts afresh. The compiler stands still (a wrapper first on
# PATH) until the signal comes.
mkdir "$T/slowcc"
cat >"$T/slowcc/c++" <<EOF
#!/bin/sh
touch "$T/compiling"
sleep 60
exec "$(command -v c++)" "\$@"
EOF
chmod +x "$T/slowcc/c++"
P="$T/runs/p"
PATH="$T/slowcc:$PATH" "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root "$T/runs" --run-id p "${FAST[@]}" --quiet >"$T/p.out" 2>"$T/p.err" &
planning=$!
wait_until 60 test -e "$T/compiling" || fail "the build never started: $(cat "$T/p.err")"
kill -TERM $planning
set +e; wait $planning; rc=$?; set -e
[ "$rc" = 143 ] || fail "a run stopped while building exited $rc, not by its SIGTERM (143)"
grep -qF "abharness: interrupted before the run's plan was written: nothing was measured; \`rm -r $P\`, then run again" \
  "$T/p.err" || fail "no hint after SIGTERM while building: $(cat "$T/p.err")"
rm -r "$P"
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root "$T/runs" --run-id p "${FAST[@]}" --quiet
pass "SIGTERM while building says nothing was measured and what to remove; the id then starts afresh"
