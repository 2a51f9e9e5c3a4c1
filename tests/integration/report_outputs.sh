# The outputs of a run as people and their tools read them: report.svg drawn by a real SVG
# renderer (rsvg-convert) at sane dimensions; report.tidy.csv of two runs with different schedules
# stacking under one header with Python's csv module, the shape parameters as columns; `report
# --print` and `report --out` on a read-only (downloaded) run directory; `compare --color`.
source "$ABH_TESTLIB"
command -v rsvg-convert >/dev/null || fail "no rsvg-convert: install librsvg2-bin (scripts/install-deps.sh does)"
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
run=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs "${FAST[@]}" --quiet)
expect_rc 0 "$ABH" run "${run[@]}" --run-id aba
expect_rc 0 "$ABH" run "${run[@]}" --run-id abba --schedule abba

# png_size FILE: "WIDTH HEIGHT" from the PNG's IHDR chunk.
png_size() {
  python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n", "not a PNG"; print(*struct.unpack(">II", d[16:24]))' "$1"
}
rsvg-convert -o aba.png runs/aba/report.svg 2>rsvg.err || fail "rsvg-convert refused report.svg: $(cat rsvg.err)"
read -r w h < <(png_size aba.png)
[ "$w" = 960 ] || fail "report.svg rendered $w px wide, not 960"
{ [ "$h" -ge 150 ] && [ "$h" -le 400 ]; } || fail "report.svg of 2 shapes rendered $h px tall"
pass "report.svg renders with rsvg-convert: ${w}x${h} px for 2 shapes"

# Two runs' tidy CSVs stack: same header, parameters as columns, one row per shape and per arm.
python3 - runs/aba/report.tidy.csv runs/abba/report.tidy.csv <<'PY' || fail "the tidy CSVs do not stack"
import csv, sys
tables = [list(csv.reader(open(f, newline=""))) for f in sys.argv[1:]]
assert tables[0][0] == tables[1][0], "headers differ"
head = tables[0][0]
for p in ("m", "n", "k"):
    assert p in head, f"no parameter column {p}: {head}"
stacked = [dict(zip(head, r)) for t in tables for r in t[1:]]
for run, arms in (("aba", 3), ("abba", 4)):
    rows = [r for r in stacked if r["run_id"] == run]
    assert len(rows) == 2 * (1 + arms), f"{run}: {len(rows)} rows"
    shapes = {r["shape"]: r for r in rows if r["row"] == "shape"}
    assert shapes["m96_n64_k80"]["m"] == "96" and shapes["m96_n64_k80"]["k"] == "80", shapes
    assert all(float(r["speedup"]) > 0 for r in shapes.values())
    assert all(float(r["median_ns"]) > 0 for r in rows if r["row"] == "arm")
print(len(stacked), "rows stacked")
PY
wide_a=$(head -1 runs/aba/report.csv | tr ',' '\n' | wc -l)
wide_b=$(head -1 runs/abba/report.csv | tr ',' '\n' | wc -l)
[ "$wide_a" != "$wide_b" ] || fail "the wide CSVs have one width: the tidy test proves nothing"
pass "report.tidy.csv of an ABA and an ABBA run stack under one header (report.csv: $wide_a vs $wide_b columns)"

# A downloaded run: read-only. Root writes anywhere, so as root the reports are asked for by an
# unprivileged user (the run directory stays readable to it).
cp -r runs/aba downloaded
as_reader=()
if [ "$(id -u)" = 0 ]; then
  chmod 755 "$T"
  chmod -R a+rX downloaded
  as_reader=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
  chmod -R a-w downloaded
fi
before=$(find downloaded -type f | sort | xargs sha256sum)
expect_rc 0 "${as_reader[@]}" "$ABH" report downloaded --print json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/last.out" || fail "--print json printed no JSON"
grep -q "read-only" "$T/last.err" || fail "report on a read-only run did not say it wrote nothing"
expect_rc 2 "${as_reader[@]}" "$ABH" report downloaded
grep -q -- "--out DIR" "$T/last.err" || fail "report on a read-only run without --out or --print does not name the fix"
# Resuming it cannot take its lock: the error says why, and to work on a copy.
expect_rc 1 "${as_reader[@]}" "$ABH" resume downloaded --quiet
grep -q "copy the run somewhere this user can write" "$T/last.err" \
  || fail "resume of a read-only run does not name the fix: $(cat "$T/last.err")"
mkdir out && chmod 777 out
expect_rc 0 "${as_reader[@]}" "$ABH" report downloaded --out out/reports --quiet
for f in md json csv tidy.csv svg pr.md; do
  [ -s "out/reports/report.$f" ] || fail "report --out wrote no report.$f"
done
cmp -s out/reports/report.json runs/aba/report.json || fail "report --out wrote another report than the run's"
[ "$before" = "$(find downloaded -type f | sort | xargs sha256sum)" ] || fail "the read-only run was changed"
pass "report --print and --out work on a read-only run directory, which stays untouched"

# compare colours its verdicts on a terminal like report, and --color never turns it off.
on_tty() { script -qec "$*" /dev/null | tr -d '\r'; }
esc=$'\x1b['
out=$(on_tty "env -u NO_COLOR '$ABH' compare runs/aba runs/abba")
[[ $out == *"$esc"* ]] || fail "compare prints no colour on a terminal"
out=$(on_tty "env -u NO_COLOR '$ABH' compare runs/aba runs/abba --color never")
[[ $out != *"$esc"* && $out == *m96_n64_k80* ]] || fail "compare --color never still colours, or printed no table"
out=$(on_tty "NO_COLOR=1 '$ABH' compare runs/aba runs/abba")
[[ $out != *"$esc"* ]] || fail "compare colours under NO_COLOR"
expect_rc 0 "$ABH" compare runs/aba runs/abba --color always
grep -qF "$esc" "$T/last.out" || fail "compare --color always does not colour into a pipe"
pass "compare --color auto|always|never, NO_COLOR honoured"

# A hostile label as every format carries it: a spreadsheet formula, a terminal escape, a
# right-to-left override and U+FFFE (which XML refuses). The CSVs defuse the formula (a leading
# apostrophe) and hide the escape, the SVG stays well-formed and renders, and no format carries
# the override or the escape.
python3 - <<'PY'
import json
label = '=HYPERLINK("http://evil","x")\x1b[31m\u202egnp.exe\ufffe'
json.dump({"schema_version": 1, "shapes": [
    {"id": "m8_n8_k8", "label": label, "params": {"m": 8, "n": 8, "k": 8}}]}, open("hostile.json", "w"))
PY
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid hostile.json \
  --runs-root runs "${FAST[@]}" --quiet --run-id hostile
rsvg-convert -o hostile.png runs/hostile/report.svg 2>rsvg.err || fail "rsvg-convert refused the hostile label's SVG: $(cat rsvg.err)"
python3 - runs/hostile <<'PY' || fail "a hostile label reached a report unneutralised (above)"
import csv, sys, xml.etree.ElementTree as ET
run = sys.argv[1]
ET.parse(run + "/report.svg")
for name in ("report.csv", "report.tidy.csv"):
    rows = list(csv.DictReader(open(f"{run}/{name}", newline="", encoding="utf-8")))
    labels = [r["label"] for r in rows if r.get("label")]
    assert labels and all(l.startswith("'=HYPERLINK") for l in labels), (name, labels)
for name in ("report.md", "report.pr.md", "report.csv", "report.tidy.csv", "report.svg"):
    text = open(f"{run}/{name}", encoding="utf-8").read()
    for bad in ("\x1b", "\u202e", "\ufffe"):
        assert bad not in text, (name, repr(bad))
PY
expect_rc 0 "$ABH" report runs/hostile --print csv
! grep -q $'\x1b' "$T/last.out" || fail "report --print csv sent a terminal escape"
pass "a hostile label: CSV formula defused, SVG well-formed, no escape or override in any format"
