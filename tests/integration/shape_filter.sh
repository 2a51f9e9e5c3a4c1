# `run --shapes` plans a subset of the grid (docs/method.md, "Running part of a grid"):
#  - a 3-shape grid with --shapes selecting 2 (one by id, one by pattern): plan.json records the
#    patterns (valid against schemas/plan.schema.json) and holds exactly those shapes, and so do
#    the results and report.json;
#  - a pattern that matches nothing, alone or beside ones that match, and an empty pattern: exit
#    2 before anything is built, naming --shapes, the pattern and some of the grid's ids; no run
#    directory is left;
#  - the filtered run resumed: `abharness resume` without the flag, and `run --resume` with the
#    grid but without --shapes, each measure only the missing arm of a selected shape; `run
#    --resume` with another --shapes is refused naming the plan's.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m24_n24_k24", "params": { "m": 24, "n": 24, "k": 24 } },
  { "id": "m32_n32_k32", "params": { "m": 32, "n": 32, "k": 32 } },
  { "id": "m48_n40_k32", "params": { "m": 48, "n": 40, "k": 32 } } ] }
JSON
common=(--repo repo "${FAST[@]}" --quiet --color never --baseline HEAD~1 --candidate HEAD)
says() { grep -qF -- "$1" "$T/last.err" || { cat "$T/last.err" >&2; fail "stderr lacks: $1"; }; }
# shapes_of FILE: the sorted shape ids of a plan (field shapes) or report (field shapes[].shape).
shapes_of() { jget "$1" '",".join(sorted(s.get("shape", s.get("id")) for s in j["shapes"]))'; }

# --- refused before anything is built -------------------------------------------------------------
refused_early() {
  expect_rc 2 "$ABH" run "${common[@]}" --grid grid.json --runs-root early "$@"
  [ ! -e early ] || fail "$*: a runs root or run directory was created: $(ls -A early)"
  ! grep -qF building "$T/last.err" || fail "$*: something was built"
}
refused_early --shapes 'm64_*'
says "--shapes 'm64_*': pattern 'm64_*' matches no shape of the grid 'grid.json' (its ids: m24_n24_k24, m32_n32_k32, m48_n40_k32)"
# One typo beside a pattern that matches: still refused, the typo named.
refused_early --shapes 'm24_*,m32_n32_k23'
says "pattern 'm32_n32_k23' matches no shape"
refused_early --shapes 'm24_*,'
says "--shapes 'm24_*,': an empty pattern"
refused_early --shapes ''
says '--shapes "": give it a value'
pass "a --shapes pattern matching no shape is refused before anything is built"

# --- a filtered run plans, measures and reports only the selected shapes --------------------------
expect_rc 0 "$ABH" run "${common[@]}" --grid grid.json --runs-root runs --run-id f \
  --shapes 'm48_n40_k32,m24_*'
R=runs/f
[ "$(shapes_of $R/plan.json)" = "m24_n24_k24,m48_n40_k32" ] || fail "plan shapes: $(shapes_of $R/plan.json)"
[ "$(jget $R/plan.json 'j["shape_filter"]')" = "['m48_n40_k32', 'm24_*']" ] \
  || fail "plan shape_filter: $(jget $R/plan.json 'j.get("shape_filter")')"
[ "$(shapes_of $R/report.json)" = "m24_n24_k24,m48_n40_k32" ] || fail "report shapes: $(shapes_of $R/report.json)"
[ ! -e $R/results/m32_n32_k32 ] || fail "the unselected shape was measured"
expect_rc 0 "$ABH" verify $R
# The recorded filter is part of the plan's schema.
"$(schema_python)" - $R/plan.json "$ABH_SOURCE_DIR/schemas/plan.schema.json" <<'PY' \
  || fail "plan.json with shape_filter does not match schemas/plan.schema.json"
import json, sys
from jsonschema import Draft202012Validator
errs = list(Draft202012Validator(json.load(open(sys.argv[2]))).iter_errors(json.load(open(sys.argv[1]))))
for e in errs: print(list(e.absolute_path), e.message, file=sys.stderr)
sys.exit(1 if errs else 0)
PY
pass "--shapes selects 2 of 3 shapes: plan, results and report hold exactly those"

# --- resumed: the plan's filter holds without the flag ---------------------------------------------
rm $R/results/m24_n24_k24/B.json
expect_rc 0 "$ABH" resume $R --quiet --color never
[ -f $R/results/m24_n24_k24/B.json ] || fail "resume did not measure the missing arm"
[ ! -e $R/results/m32_n32_k32 ] || fail "resume measured the unselected shape"
[ "$(shapes_of $R/report.json)" = "m24_n24_k24,m48_n40_k32" ] || fail "resumed report shapes"
rm $R/results/m48_n40_k32/A2.json
expect_rc 0 "$ABH" run "${common[@]}" --grid grid.json --resume $R
[ -f $R/results/m48_n40_k32/A2.json ] || fail "run --resume did not measure the missing arm"
[ ! -e $R/results/m32_n32_k32 ] || fail "run --resume measured the unselected shape"
rm $R/results/m48_n40_k32/A2.json
expect_rc 2 "$ABH" run "${common[@]}" --grid grid.json --resume $R --shapes 'm32_*'
says "--shapes 'm32_*' differs from the plan's --shapes 'm48_n40_k32,m24_*'"
[ ! -e $R/results/m48_n40_k32/A2.json ] || fail "a refused resume measured"
expect_rc 0 "$ABH" run "${common[@]}" --grid grid.json --resume $R --shapes 'm48_n40_k32,m24_*'
[ -f $R/results/m48_n40_k32/A2.json ] || fail "run --resume with the plan's --shapes did not measure"
pass "a filtered run resumes with its plan's filter, and refuses another"
