# What `abharness resume` refuses, and what it must not refuse. Refused (exit 2, before anything
# runs, naming the reason): a WORKTREE candidate whose working tree gained an untracked file; a
# worker binary that changed since the plan; a machine that differs from the plan's. Not refused: a
# baseline branch that moved after the plan — "baseline" is the commit the plan resolved.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m24", "params": { "m": 24, "n": 24, "k": 24 } } ] }
JSON
# count_results RUN: how many result files exist.
count_results() { find "$1/results" -name '*.json' | wc -l; }

# 1. WORKTREE candidate (an uncommitted edit), then a new untracked file.
sed -i 's/blocked-ikj-64/blocked-ikj-64-wip/' repo/kernel.cpp
cp -a "$ABH_BIN" "$T/bin"  # a private copy of the binaries, for case 2
# Outside its build tree a binary reads the install layout around it (docs/install.md).
ln -s "$ABH_SOURCE_DIR/include" "$T/include"
mkdir -p "$T/share/abharness" && ln -s "$ABH_SOURCE_DIR/data" "$T/share/abharness/data"
expect_rc 0 "$T/bin/abharness" run --repo repo --baseline HEAD --candidate WORKTREE \
  --grid grid.json --runs-root runs --run-id wt "${FAST[@]}" --quiet
R=runs/wt
rm $R/results/m24/B.json
echo "scratch notes" >repo/notes.txt
expect_rc 2 "$T/bin/abharness" resume $R
grep -q "working tree of $(cd repo && pwd) changed since the plan" "$T/last.err" \
  || fail "untracked file: $(cat "$T/last.err")"
[ "$(count_results $R)" = 2 ] || fail "a refused resume measured something"
# The untracked file was the reason: without it, resume goes on.
rm repo/notes.txt
expect_rc 0 "$T/bin/abharness" resume $R --quiet
[ "$(count_results $R)" = 3 ] || fail "resume did not re-measure the missing arm"
pass "a WORKTREE candidate with a new untracked file is not resumed"

# 2. The worker binary changed after the plan (the run used the private copy of the binaries).
rm $R/results/m24/A2.json
printf '\0' >>"$T/bin/abharness-worker"
expect_rc 2 "$T/bin/abharness" resume $R
grep -q "the worker binary changed since the plan" "$T/last.err" || fail "worker: $(cat "$T/last.err")"
[ "$(count_results $R)" = 2 ] || fail "a refused resume measured something"
pass "a changed worker binary is not resumed"

# 3. The machine differs from the plan's (the plan says another host).
cp -a $R "$T/other-host"
# The plan's own digest recomputed (as a forger would), so that the machine check is what refuses.
edit_json "$T/other-host/plan.json" 'j["machine"][0]["hostname"] = "some-other-host"' redigest
expect_rc 2 "$ABH" resume "$T/other-host"
grep -q "machine differs from the plan: hostname" "$T/last.err" || fail "machine: $(cat "$T/last.err")"
pass "a run planned on another machine is not resumed"

# 4. A moved branch does not change what "baseline" means.
git -C repo checkout -q -- kernel.cpp
git_q -C repo branch base HEAD~1
old=$(git -C repo rev-parse base)
expect_rc 0 "$ABH" run --repo repo --baseline base --candidate HEAD --grid grid.json \
  --runs-root runs --run-id br "${FAST[@]}" --quiet
R=runs/br
rm $R/results/m24/A1.json
git_q -C repo branch -f base HEAD
[ "$(git -C repo rev-parse base)" != "$old" ] || fail "the branch did not move"
expect_rc 0 "$ABH" resume $R --quiet
[ "$(jget $R/plan.json 'j["variants"][0]["source"]["commit"]')" = "$old" ] || fail "plan changed"
[ "$(jget $R/results/m24/A1.json 'j["source"]["commit"]')" = "$old" ] \
  || fail "the re-measured baseline arm is not the planned commit"
expect_rc 0 "$ABH" verify $R
# `run --resume` with the same words also means the plan's commits, not the branch's new one.
rm $R/results/m24/A2.json
expect_rc 0 "$ABH" run --resume $R --repo repo --baseline base --candidate HEAD --grid grid.json \
  "${FAST[@]}" --quiet
[ "$(jget $R/results/m24/A2.json 'j["source"]["commit"]')" = "$old" ] || fail "run --resume"
# --repo left out means the plan's repository, not the default '.'; given, it must be the plan's.
rm $R/results/m24/A2.json
expect_rc 2 "$ABH" run --resume $R --repo . --grid grid.json "${FAST[@]}" --quiet
grep -q "\-\-repo $PWD differs from the plan's repository" "$T/last.err" || fail "--repo .: $(cat "$T/last.err")"
expect_rc 0 "$ABH" run --resume $R --grid grid.json "${FAST[@]}" --quiet
[ -f $R/results/m24/A2.json ] || fail "run --resume without --repo did not measure"
pass "a moved baseline branch does not change the plan's baseline"

# 5. A directory without a plan is told apart: a run starting now (its .lock held: no advice to
# remove it), and a finished run whose plan.json was removed (its results kept: restore the plan).
mkdir -p runs/live/variants
: >runs/live/.lock
# One process holds it (no child to outlive a kill), its output off the test's pipe.
python3 -c 'import fcntl, sys, time; f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)' \
  runs/live/.lock >/dev/null 2>&1 &
holder=$!
wait_until 10 bash -c '! flock -n runs/live/.lock true' || fail "the lock was not taken"
expect_rc 2 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id live "${FAST[@]}" --quiet
grep -q "another abharness is starting that run now" "$T/last.err" || fail "live start: $(cat "$T/last.err")"
! grep -q "rm -r" "$T/last.err" || fail "advised removing a live run directory: $(cat "$T/last.err")"
expect_rc 2 "$ABH" verify runs/live
grep -q "another abharness is starting this run now" "$T/last.err" || fail "verify live: $(cat "$T/last.err")"
! grep -q "rm -r" "$T/last.err" || fail "verify advised removing a live run directory"
kill "$holder"; wait "$holder" 2>/dev/null || true
cp -a $R runs/noplan && rm runs/noplan/plan.json
expect_rc 2 "$ABH" verify runs/noplan
grep -q "yet it holds results/: its plan was removed after the run" "$T/last.err" || fail "no plan: $(cat "$T/last.err")"
! grep -q "rm -r" "$T/last.err" || fail "advised removing a run that holds results"
pass "no plan: a starting run is waited for, a run with results has its plan restored, neither removed"
