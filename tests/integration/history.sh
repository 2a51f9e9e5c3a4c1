# `abharness history` (docs/history.md), end to end on three real CPU runs of the example kernel
# (an A/A run at the baseline commit, the candidate commit on a grid with one more shape, and a
# working tree with a change over the candidate), given out of date order:
#   - history.json validates against schemas/history.schema.json; runs are in date order, each
#     labelled with its candidate's short commit (-dirty for the changed working tree) and its
#     plan's machine; every point is its report.json's row; the shape of one run has one point;
#     each run's report link resolves, from the page's directory, to its report.md;
#   - the page, loaded from the file system in real headless Chromium, draws one chart per shape
#     with ?all=1 and through lazy drawing in a tall window (the DOM's canvases and the page's
#     data-charts marker both equal the number of shapes), with #errors empty and no uncaught
#     error or console message on Chromium's log; a screenshot is kept in the test's output dir;
#   - a tampered run is refused by name (exit 3) and nothing is written; a copy of a run is
#     refused (exit 2); a missing Chart.js is an error naming the file and libjs-chart.js.
# Chromium is required, not optional: without it this test fails (CI installs it).
source "$ABH_TESTLIB"
OUT=${ABH_TEST_OUTPUT:-$T/output}
mkdir -p "$OUT"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || fail "no chromium: install it (apt-get install chromium; scripts/install-deps.sh does)"
PY=$(schema_python)
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
cat > grid3.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m32_n32_k32", "params": { "m": 32, "n": 32, "k": 32 } },
  { "id": "m96_n64_k80", "params": { "m": 96, "n": 64, "k": 80 } },
  { "id": "m48_n48_k48", "label": "only in <r2> & \"quoted\"", "params": { "m": 48, "n": 48, "k": 48 } } ] }
JSON
run=(--repo repo --baseline HEAD~1 --runs-root runs --quiet "${FAST[@]}")
expect_rc 0 "$ABH" run "${run[@]}" --candidate HEAD~1 --grid grid.json --run-id r1
expect_rc 0 "$ABH" run "${run[@]}" --candidate HEAD --grid grid3.json --run-id r2
echo "// a comment: the working tree differs from HEAD" >> repo/kernel.cpp
expect_rc 0 "$ABH" run "${run[@]}" --candidate WORKTREE --grid grid.json --run-id r3

expect_rc 0 "$ABH" history runs/r3 runs/r1 runs/r2 --out hist
grep -qF "history: hist/index.html (3 run(s), 3 chart(s)" "$T/last.err" || fail "history said: $(cat "$T/last.err")"
cmp -s hist/chart.min.js /usr/share/javascript/chart.js/chart.min.js || fail "hist/chart.min.js is not Debian's Chart.js"
"$PY" - hist "$ABH_SOURCE_DIR/schemas/history.schema.json" <<'PY' || fail "history.json (above)"
import json, os, sys
from jsonschema import Draft202012Validator

out, schema = sys.argv[1], json.load(open(sys.argv[2]))
Draft202012Validator.check_schema(schema)
h = json.load(open(f"{out}/history.json"))
Draft202012Validator(schema).validate(h)
assert [r["run_id"] for r in h["runs"]] == ["r1", "r2", "r3"], [r["run_id"] for r in h["runs"]]
dates = [r["created_at"] for r in h["runs"]]
assert dates == sorted(dates), dates
for i, r in enumerate(h["runs"]):
    plan = json.load(open(f"runs/{r['run_id']}/plan.json"))
    cand = next(v for v in plan["variants"] if v["name"] == "candidate")["source"]
    want = cand["commit"][:7] + ("-dirty" if r["run_id"] == "r3" else "")
    assert r["commit_label"] == want, (r["commit_label"], want)
    assert r["candidate_commit"] == cand["commit"] and r["candidate_kind"] == cand["kind"], r
    assert r["created_at"] == plan["created_at"] and r["run_nonce"] == plan["run_nonce"], r
    m = plan["machine"][0]
    assert r["machines"] == [f"{m['hostname']}: {m['cpu_model']}"], (r["machines"], m)
    link = os.path.normpath(os.path.join(out, r["report_link"]))
    assert link == f"runs/{r['run_id']}/report.md", (r["report_link"], link)
    report = json.load(open(link.replace(".md", ".json")))
    assert r["geomean"] == report["summary"]["geomean"], (r["geomean"], report["summary"])
    rows = {s["shape"]: s for s in report["shapes"]}
    for s in h["shapes"]:
        pts = [p for p in s["points"] if p["run"] == i]
        assert len(pts) == (1 if s["shape"] in rows else 0), (s["shape"], i)
        for p in pts:
            row = rows[s["shape"]]
            for k in ("verdict", "speedup", "ci", "baseline_ns", "candidate_ns", "failure"):
                assert p[k] == row[k], (s["shape"], i, k, p[k], row[k])
# r2's commit differs from r1's: a real history, not one commit three times.
assert h["runs"][0]["candidate_commit"] != h["runs"][1]["candidate_commit"]
shapes = {s["shape"]: s for s in h["shapes"]}
assert len(shapes) == 3 and [p["run"] for p in shapes["m48_n48_k48"]["points"]] == [1]
assert h["notes"] == ["1 of 3 shape(s) are missing from some run (their charts have gaps there)"], h["notes"]
print(f"history.json: {len(h['runs'])} runs, {len(h['shapes'])} shapes, every point its report's")
PY
pass "history.json: date order, commit labels, machines, report links, every point its report's"

# The page in a real browser, from the file system. chrome URL SIZE DUMP LOG [FLAGS...]: the DOM
# after the page ran (virtual time lets every task finish), Chromium's log (console messages and
# uncaught errors) beside it.
chrome() {
  local url=$1 size=$2 dump=$3 log=$4; shift 4
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome-profile" \
    --enable-logging=stderr --v=0 --virtual-time-budget=10000 --window-size="$size" "$@" \
    --dump-dom "$url" >"$dump" 2>"$log" || { cat "$log" >&2; fail "chromium failed on $url"; }
}
# check_page DUMP LOG WHAT: one chart per shape drawn, nothing in #errors, nothing on the log.
check_page() {
  local dump=$1 log=$2 what=$3 canvases charts
  grep -q 'id="history-data"' "$dump" || fail "$what: chromium dumped no history page: $(head -c 300 "$dump")"
  canvases=$(grep -o '<canvas' "$dump" | wc -l)
  charts=$(grep -o 'data-charts="[0-9]*"' "$dump" | grep -o '[0-9]*')
  grep -q 'data-shapes="3"' "$dump" || fail "$what: the page does not know its 3 shapes"
  [ "$canvases" = 3 ] || fail "$what: $canvases canvases in the DOM for 3 shapes"
  [ "$charts" = 3 ] || fail "$what: data-charts=$charts for 3 shapes"
  grep -q 'data-ready-ms="[0-9.]*"' "$dump" || fail "$what: the page never said it was ready"
  grep -q '<pre id="errors"></pre>' "$dump" ||
    fail "$what: the page's #errors holds: $(grep -o '<pre id="errors">[^<]*' "$dump")"
  grep -q 'data-errors="0"' "$dump" || fail "$what: data-errors is not 0"
  ! grep -E "Uncaught|CONSOLE" "$log" || fail "$what: chromium logged an error or console message (above)"
}
page="file://$T/hist/index.html"
chrome "$page?all=1" 1280,900 all.html all.log
check_page all.html all.log "?all=1"
chrome "$page" 1280,4000 lazy.html lazy.log
check_page lazy.html lazy.log "lazy drawing in a tall window"
pass "chromium: one chart per shape, with ?all=1 and drawn lazily, #errors empty, no console error"

# The checks above can fail: a page whose Chart.js does not load says so in #errors and draws
# nothing (and a console message would be caught on the log).
cp -r hist broken && rm broken/chart.min.js
chrome "file://$T/broken/index.html?all=1" 1280,900 broken.html broken.log
grep -q 'data-charts="0"' broken.html || fail "a page without Chart.js drew charts"
grep -q 'cannot load .*chart.min.js' broken.html || fail "a page without Chart.js has no error in #errors"
pass "a page without its Chart.js reports it in #errors"

# A shape that failed in a run (a failed arm: no speedup, a failure) is drawn too: the page's data
# with the latest (r3's) point of the first shape turned into the failure a real failed arm gives.
python3 - hist/index.html failed.html <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
m = re.search(r'(<script type="application/json" id="history-data">)(.*?)(</script>)', page, re.S)
h = json.loads(m.group(2))
h["shapes"][0]["points"][-1].update(verdict="failed", failure="B: exit code 3: worker crashed",
                                   speedup=None, ci=None, baseline_ns=None, candidate_ns=None)
data = json.dumps(h).replace("<", "\\u003c")
open(sys.argv[2], "w").write(page[:m.start(2)] + data + page[m.end(2):])
PY
cp failed.html hist/failed.html
chrome "file://$T/hist/failed.html?all=1" 1280,900 failed.dom failed.log
check_page failed.dom failed.log "a failed point"
grep -q 'class="failed">failed</span> — B: exit code 3: worker crashed' failed.dom ||
  fail "the shape's latest, failed, point is not shown with its failure"
rm hist/failed.html
pass "a run where a shape failed is drawn, without errors"

# A screenshot, kept: what the page looks like.
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome-profile" \
  --virtual-time-budget=10000 --hide-scrollbars --window-size=1280,2000 \
  --screenshot="$OUT/history.png" "$page?all=1" >shot.log 2>&1 || { cat shot.log >&2; fail "no screenshot"; }
python3 - "$OUT/history.png" <<'PY' || fail "the screenshot (above)"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", d[16:24])
assert (w, h) == (1280, 2000), (w, h)
# A blank or text-only page compresses to a few kB; three charts with their lines do not.
assert len(d) > 40000, f"{len(d)} bytes: is anything drawn?"
print(f"screenshot {w}x{h}, {len(d)} bytes: {sys.argv[1]}")
PY
pass "screenshot kept at $OUT/history.png"

# Refusals, none of which writes anything.
expect_rc 1 "$ABH" history runs/r1 --out nochart --chart-js "$T/none/chart.min.js"
grep -qF "Chart.js is not at $T/none/chart.min.js" "$T/last.err" && grep -qF "libjs-chart.js" "$T/last.err" ||
  fail "missing Chart.js: $(cat "$T/last.err")"
[ ! -e nochart ] || fail "history wrote something without Chart.js"
cp -r runs/r1 runs/copy
expect_rc 2 "$ABH" history runs/r1 runs/copy --out copies
grep -qF "are copies of one run" "$T/last.err" || fail "copy: $(cat "$T/last.err")"
[ ! -e copies ] || fail "history of a run and its copy wrote something"
before=$(cd hist && sha256sum index.html history.json chart.min.js)
S=$(python3 -c 'import json; print(json.load(open("grid.json"))["shapes"][0]["id"])')
edit_json "runs/r2/results/$S/B.json" 'j["measurement"]["samples_ns"][0] *= 0.5'
for out in tampered hist; do
  expect_rc 3 "$ABH" history runs/r1 runs/r2 runs/r3 --out $out
  grep -qF "history: run runs/r2 (r2) is refused" "$T/last.err" || fail "tamper: $(cat "$T/last.err")"
  grep -qF "nothing is written" "$T/last.err" || fail "tamper: $(cat "$T/last.err")"
  ! grep -q "runs/r1 (r1) is refused\|runs/r3 (r3) is refused" "$T/last.err" || fail "an intact run was refused"
done
[ ! -e tampered ] || fail "a refused history wrote a directory"
[ "$(cd hist && sha256sum index.html history.json chart.min.js)" = "$before" ] ||
  fail "a refused history changed an existing page"
pass "a tampered run is refused by name (exit 3), a copy (exit 2), no Chart.js (exit 1): nothing written"
