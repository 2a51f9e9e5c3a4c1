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

# craft RUN SHAPE ARM=MEDIAN...: each arm's samples become 21 values within +-0.05 % of MEDIAN us.
craft() {
  local run=$1 shape=$2; shift 2
  for am in "$@"; do
    edit_json "$run/results/$shape/${am%%=*}.json" \
      "j['measurement']['samples_ns'] = [${am#*=} * 1000 * (1 + 0.0005 * ((i % 5) - 2) / 2) for i in range(21)]" \
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
# An unstable shape whose candidate arms are all slower than every baseline arm is a regression
# (exit 5). It takes two candidate arms (ABBA): one alone is undecided (exit 6), never passed.
expect_rc 0 "$ABH" run "${run_args[@]}" --run-id abba --schedule abba
fresh abba
craft "$T/c" $S1 A1=100 B1=400 B2=400 A2=150
craft "$T/c" $S2 A1=100 B1=100 B2=100 A2=100
expect_rc 5 "$ABH" report "$T/c" --quiet --fail-on-regression
grep -q "$S1: unstable, but every candidate arm is slower than every baseline arm by more than the band and the baseline's own spread" "$T/last.err" || fail "regression reason: $(cat "$T/last.err")"
fresh plain
craft "$T/c" $S1 A1=100 B=400 A2=150
craft "$T/c" $S2 A1=100 B=100 A2=100
expect_rc 6 "$ABH" report "$T/c" --quiet --fail-on-regression
grep -q "$S1: unstable: the baseline drifted" "$T/last.err" || fail "single-arm reason: $(cat "$T/last.err")"
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
# S1's baseline drifted 2 % (unstable); S2 is 2x faster, decided even with S1's arm variation
# in its prior.
craft "$T/c" $S1 A1=100 B1=100 A2=102
craft "$T/c" $S2 A1=100 B1=50 A2=100
# The rule now calls for block 1 of S1 only, which has no results: incomplete, not refused.
expect_rc 4 "$ABH" verify "$T/c"
grep -q "verified 6 of 9" "$T/last.out" || fail "required block not counted: $(cat "$T/last.out")"
# resume continues the extension: block 1 of S1. The rule judges every shape again at each step,
# so S2 gets its block too when S1's measured block (real arms beside crafted ones) widened the
# prior enough to make S2 undecided again; verify then proves that whatever ran was called for
# (a block the rule did not call for is refused as unrequired-block).
expect_rc 0 "$ABH" resume "$T/c" --quiet
for a in A3 B2 A4; do
  [ -f "$T/c/results/$S1/$a.json" ] || fail "resume did not run $S1/$a"
done
expect_rc 0 "$ABH" verify "$T/c"
grep -qE "verified (9 of 9|12 of 12)" "$T/last.out" || fail "extension not verified: $(cat "$T/last.out")"
# Once block 0 is decided, block 1's results are for a block that should not have run.
craft "$T/c" $S1 A1=100 B1=100 A2=100
expect_rc 3 "$ABH" verify "$T/c"
grep -q "results/$S1/A3.json: unrequired-block" "$T/last.err" || fail "unrequired block not refused: $(cat "$T/last.err")"
pass "--until-decided: planned up front, resumed, verified exactly"
