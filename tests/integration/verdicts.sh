# Verdicts that cannot lie, end to end on the CPU plugin (docs/statistics.md, docs/exit-codes.md):
# arms are pinned where the plan says and provenance checks it; a warm-up runs unrecorded before
# the first arm; results with crafted samples (payload digest recomputed, as tamper.sh does) drive
# the fail-closed gate, the arm-level interval and the SVG axis deterministically; and
# --until-decided runs, resumes and verifies exactly the blocks its rule calls for.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid grid.json
S1=m32_n32_k32
S2=m96_n64_k80
run_args=(--repo repo --baseline HEAD --candidate HEAD --grid grid.json --runs-root runs
  "${FAST[@]}" --quiet --color never)
expect_rc 0 "$ABH" run "${run_args[@]}" --run-id plain

# craft RUN SHAPE ARM=MEDIAN...: each arm's samples become 21 values within +-0.05 % of MEDIAN us (its
# stopping evidence, which counted the samples it replaces, dropped as results before it had none).
craft() {
  local run=$1 shape=$2; shift 2
  for am in "$@"; do
    edit_json "$run/results/$shape/${am%%=*}.json" \
      "j['measurement']['samples_ns'] = [${am#*=} * 1000 * (1 + 0.0005 * ((i % 5) - 2) / 2) for i in range(21)]; j['measurement'].pop('stop', None)" \
      redigest
  done
}
fresh() { rm -rf "$T/c"; cp -a runs/$1 "$T/c"; rm -f "$T/c"/report.*; }
verdict() { jget "$T/c/report.json" "[s['verdict'] for s in j['shapes'] if s['shape'] == '$1'][0]"; }

# --- Placement: one CPU set for every arm, recorded by the worker, checked by provenance. ---
P=runs/plain
python3 - "$P" <<'PY'
import json, sys
run = sys.argv[1]
plan = json.load(open(run + "/plan.json"))
sets = {tuple(t["cpus"]) for t in plan["tasks"]}
assert len(sets) == 1 and len(next(iter(sets))) >= 1, f"arms not on one CPU set: {sets}"
cpus = list(next(iter(sets)))
for t in plan["tasks"]:
    r = json.load(open(f"{run}/results/{t['shape']}/{t['arm']}.json"))["placement"]
    assert r["cpus"] == cpus and r["affinity"] == cpus[:1] and r["seen"] == cpus[:1], r
print("placement ok:", cpus)
PY
fresh plain
edit_json "$T/c/results/$S1/B.json" "j['placement']['seen'] = j['placement']['seen'] + [4095]" redigest
expect_rc 3 "$ABH" verify "$T/c"
grep -q "results/$S1/B.json: placement (field 'placement.seen')" "$T/last.err" || fail "moved arm not refused: $(cat "$T/last.err")"
pass "arms pinned where the plan says; an arm seen elsewhere is refused"

# --- Warm-up: the lane's first arm of each variant ran once before anything was measured, and
# left no result. ---
[ -s "$P/logs/$S1/A1.warmup.out" ] || fail "no warm-up log for the first arm"
grep -q "no result written" "$P/logs/$S1/A1.warmup.out" || fail "warm-up did not finish: $(cat "$P/logs/$S1/A1.warmup.out")"
grep -q "no result written" "$P/logs/$S1/B.warmup.out" || fail "the candidate was not warmed up"
[ "$(ls "$P/results/$S1" | wc -l)" = 3 ] || fail "the warm-up left a result: $(ls "$P/results/$S1")"
pass "warm-up before the first arm, unrecorded"

# --- The gate fails closed. ---
# A baseline that drifted 50 % cannot hide a candidate 2.7x slower than even its slower arm: the
# interval widened by the drift still lies below the band, so the shape is slower, not unstable,
# and a regression (exit 5) on two candidate arms (ABBA). With one (ABA) the shape's own interval
# is far wider (one B arm against A arms 50 % apart), and it is unstable: undecided (exit 6);
# with A arms 2 % apart it is slower, but unconfirmed on its one arm: undecided too, never passed.
expect_rc 0 "$ABH" run "${run_args[@]}" --run-id abba --schedule abba
fresh abba
craft "$T/c" $S1 A1=100 B1=400 B2=400 A2=150
craft "$T/c" $S2 A1=100 B1=100 B2=100 A2=100
expect_rc 5 "$ABH" report "$T/c" --quiet --fail-on-regression
grep -qE "$S1: slower: .* lies below 1 - band = 0.990, and so does .*, widened by the drift \+50.00%" "$T/last.err" || fail "regression reason: $(cat "$T/last.err")"
[ "$(jget "$T/c/report.json" "[s['drift_ci'] is not None for s in j['shapes']]")" = "[True, False]" ] ||
  fail "drift_ci: $(jget "$T/c/report.json" "[s['drift_ci'] for s in j['shapes']]")"
fresh plain
craft "$T/c" $S1 A1=100 B=400 A2=150
craft "$T/c" $S2 A1=100 B=100 A2=100
expect_rc 6 "$ABH" report "$T/c" --quiet --fail-on-regression
grep -q "$S1: unstable: the baseline drifted" "$T/last.err" || fail "single-arm reason: $(cat "$T/last.err")"
craft "$T/c" $S1 A1=100 B=400 A2=102
expect_rc 6 "$ABH" report "$T/c" --quiet --fail-on-regression
grep -q "$S1: slower on its only candidate arm: .*unconfirmed" "$T/last.err" || fail "unconfirmed reason: $(cat "$T/last.err")"
grep -q "are called faster or slower on a single candidate arm, unconfirmed" "$T/c/report.md" || fail "no unconfirmed note in report.md"
# An unstable shape that overlaps its baseline is undecided: exit 6, unless opted out.
craft "$T/c" $S1 A1=100 B=120 A2=150
expect_rc 6 "$ABH" report "$T/c" --quiet --fail-on-regression
grep -q "$S1: unstable: the baseline drifted" "$T/last.err" || fail "undecided reason: $(cat "$T/last.err")"
expect_rc 0 "$ABH" report "$T/c" --quiet --fail-on-regression --allow-undecided
grep -q "passed because of --allow-undecided" "$T/last.err" || fail "opt-out not said"
expect_rc 0 "$ABH" report "$T/c" --quiet
pass "gate: separated regression exits 5, undecided exits 6 unless --allow-undecided"

# --- The interval's unit is the arm: A1 and A2 0.9 % apart (inside the band, so not unstable)
# and B 1.6 % below their mean. Sample noise alone (0.05 %) called this "faster". ---
fresh plain
craft "$T/c" $S1 A1=100 B=98.9 A2=100.9
craft "$T/c" $S2 A1=100 B=100 A2=100
expect_rc 0 "$ABH" report "$T/c" --quiet
[ "$(verdict $S1)" = ambiguous ] || fail "disagreeing arms gave $(verdict $S1)"
[ "$(jget "$T/c/report.json" "j['shapes'][0]['arm_variation']['own_df']")" = 1.0 ] || fail "own df"
pass "one ABA block whose A1 and A2 disagree widens the interval"

# --- The SVG axis has no negative tick (a 50x slowdown once put "-0.0x" on a linear one). ---
fresh plain
craft "$T/c" $S1 A1=100 B=5000 A2=100
craft "$T/c" $S2 A1=100 B=100 A2=100
expect_rc 0 "$ABH" report "$T/c" --quiet
! grep -qE '>-[0-9.]+x</text>' "$T/c/report.svg" || fail "negative tick: $(grep -oE '>-[0-9.]+x</text>' "$T/c/report.svg")"
# The axis is logarithmic: no tick at 0, and one of its 1-2-5 ticks near the 50x slowdown (0.02x).
grep -qE '>0\.0[1-9]x</text>' "$T/c/report.svg" || fail "the log axis has no tick at 0.01-0.09x: $(grep -oE '>[0-9.]+x</text>' "$T/c/report.svg" | tr '\n' ' ')"
pass "no negative axis tick; the log axis reaches a 50x slowdown"

# --- --until-decided: the plan lists the conditional block; the rule decides what runs. ---
expect_rc 0 "$ABH" run "${run_args[@]}" --run-id ad --until-decided 1
A=runs/ad
[ "$(jget $A/plan.json "sum(t['conditional'] for t in j['tasks'])")" = 6 ] || fail "conditional tasks not planned"
fresh ad
rm -f "$T/c"/results/*/{A3,B2,A4}.json
# S1's baseline drifted 2 % (unstable); S2 is 2x faster on its one candidate arm, decided even
# with S1's arm variation in its prior, and so to be confirmed.
craft "$T/c" $S1 A1=100 B1=100 A2=102
craft "$T/c" $S2 A1=100 B1=50 A2=100
# The rule now calls for block 1 of both shapes, which has no results: incomplete, not refused.
expect_rc 4 "$ABH" verify "$T/c"
grep -q "verified 6 of 12" "$T/last.out" || fail "required blocks not counted: $(cat "$T/last.out")"
grep -q "without a valid result: $S1/A3 (not run), $S1/B2 (not run)" "$T/last.out" &&
  grep -q "abharness resume '$T/c'. measures them" "$T/last.out" ||
  fail "verify does not name the missing arms: $(cat "$T/last.out")"
# resume continues the extension: block 1 of both; verify then proves that whatever ran was
# called for (a block the rule did not call for is refused as unrequired-block).
expect_rc 0 "$ABH" resume "$T/c" --quiet
for s in $S1 $S2; do
  for a in A3 B2 A4; do
    [ -f "$T/c/results/$s/$a.json" ] || fail "resume did not run $s/$a"
  done
done
expect_rc 0 "$ABH" verify "$T/c"
grep -q "verified 12 of 12" "$T/last.out" || fail "extension not verified: $(cat "$T/last.out")"
# Once S1's block 0 is decided, its block 1's results are for a block that should not have run.
# (S2's confirmation block is crafted to agree with its first: real arms beside crafted ones
# would widen S1's prior by whatever they measured.)
craft "$T/c" $S1 A1=100 B1=100 A2=100
craft "$T/c" $S2 A3=100 B2=50 A4=100
expect_rc 3 "$ABH" verify "$T/c"
grep -q "results/$S1/A3.json: unrequired-block" "$T/last.err" || fail "unrequired block not refused: $(cat "$T/last.err")"
grep -q "what to do: .*abharness resume '$T/c'. sets them aside" "$T/last.err" ||
  fail "no repair hint for unrequired blocks: $(cat "$T/last.err")"
# Such results arise when an arm whose result was lost is measured again and the rule, judging the
# new result, no longer calls for blocks measured under its earlier decision. S2's block-1 arm A4
# is lost: the rule waits on it (S1's block 1 is kept, not judged), resume measures A4, and then
# sets S1's block 1 aside, moved and not deleted, instead of leaving a run that verify refuses.
rm "$T/c/results/$S2/A4.json"
expect_rc 4 "$ABH" verify "$T/c"
expect_rc 0 "$ABH" resume "$T/c" --quiet
for a in A3 B2 A4; do
  [ -f "$T/c/set_aside/unrequired/$S1/$a.json" ] && [ ! -e "$T/c/results/$S1/$a.json" ] ||
    fail "resume did not set $S1/$a aside: $(cat "$T/last.err")"
done
grep -q "until decided: set aside results/$S1/A3.json (now set_aside/unrequired/$S1/A3.json)" "$T/last.err" ||
  fail "resume did not say what it set aside: $(cat "$T/last.err")"
[ -f "$T/c/results/$S2/A4.json" ] || fail "resume did not measure the lost arm again"
expect_rc 0 "$ABH" verify "$T/c"
grep -q "verified 9 of 9" "$T/last.out" || fail "after the set-aside: $(cat "$T/last.out")"
pass "--until-decided: planned up front, resumed, verified exactly; blocks no longer called for are set aside"

# --- Confirmation: one disturbed candidate arm cannot fail the gate. An A/A run whose only B arm
# came out 20 % slower is slower on that arm; the rule gives it a second block, whose B arm agrees
# with the baseline, and the shape is then undecided (the two B arms disagree), not a regression.
fresh ad
rm -f "$T/c"/results/*/{A3,B2,A4}.json
craft "$T/c" $S1 A1=100 B1=120 A2=100
craft "$T/c" $S2 A1=100 B1=100 A2=100
expect_rc 4 "$ABH" verify "$T/c"
grep -q "verified 6 of 9" "$T/last.out" || fail "confirmation block not required: $(cat "$T/last.out")"
expect_rc 0 "$ABH" resume "$T/c" --quiet
[ -f "$T/c/results/$S1/B2.json" ] || fail "resume did not run the confirmation block"
craft "$T/c" $S1 A3=100 B2=100 A4=100
# S1's two B arms now disagree by 20 %, which widens S2's prior enough to give S2 a block too
# (the resume gave it one already when S1's real arms did the same); it is crafted to agree.
[ -f "$T/c/results/$S2/B2.json" ] || expect_rc 0 "$ABH" resume "$T/c" --quiet
craft "$T/c" $S2 A3=100 B2=100 A4=100
rm -f "$T/c"/report.*
expect_rc 6 "$ABH" report "$T/c" --quiet --fail-on-regression
[ "$(verdict $S1)" = ambiguous ] || fail "one disturbed arm in two blocks gave $(verdict $S1)"
# The same first block with --until-decided 0: no confirmation could run, and the gate still does
# not act on one arm.
fresh plain
craft "$T/c" $S1 A1=100 B=120 A2=100
craft "$T/c" $S2 A1=100 B=100 A2=100
expect_rc 6 "$ABH" report "$T/c" --quiet --fail-on-regression
[ "$(verdict $S1)" = slower ] || fail "unconfirmed verdict: $(verdict $S1)"
pass "confirmation: a one-arm slower verdict gets a second block; one disturbed arm never exits 5"
