#!/usr/bin/env bash
# The history page at scale (docs/history.md): `abharness history` over RUNS real CPU runs of
# SHAPES shapes each (default 50 x 200). Each run measures a new commit of the example kernel
# against its parent, as a nightly job over a branch would, with tiny settings (3 samples, 1 ms,
# the next arm's worker started ahead): the page's size and load time depend on how many runs and
# shapes it shows, not on how long their arms measured, and every run is still a real, verified
# run (copies of one run would be refused: `history` tells runs apart by their plan's nonce).
#
# Prints the time per run, `history`'s wall time, the sizes of index.html, history.json and
# chart.min.js, and the page's load time in headless Chromium (median of LOADS loads): the
# page's own performance.now() when its first charts were drawn (data-ready-ms), with ?all=1
# (every chart drawn before it is ready) and lazily in a 1280x2000 window (the charts near the
# view), and the wall time of each `chromium --dump-dom`, beside that of an empty page (Chromium's
# own start and exit).
#
# Usage: bench/history_page.sh [RUNS] [SHAPES] [WORK_DIR]
#   ABH_BIN: the directory of the abharness binary (default: build/bin of this checkout)
#   LOADS: loads per measurement (default 5)
# WORK_DIR is kept; run again with it to measure the page again without making the runs again.
set -euo pipefail
runs=${1:-50}
shapes=${2:-200}
work=${3:-$(mktemp -d /tmp/abh-history-bench.XXXXXX)}
loads=${LOADS:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
ABH=${ABH_BIN:-$root/build/bin}/abharness
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
  { echo "history_page: no chromium: apt-get install chromium" >&2; exit 1; }
mkdir -p "$work"
cd "$work"
echo "history_page: $runs runs x $shapes shapes in $work"

if [ ! -d repo ]; then
  "$root/examples/make-demo-repo.sh" cpu repo >/dev/null
  # SHAPES tiny GEMMs with distinct ids: the arms are short, the page as large as a real grid's.
  python3 - "$shapes" >grid.json <<'PY'
import itertools, json, sys
n = int(sys.argv[1])
dims = itertools.product(range(8, 200, 8), repeat=3)
shapes = [{"id": f"m{m}_n{k}_k{q}", "params": {"m": m, "n": k, "k": q}}
          for m, k, q in itertools.islice(dims, n)]
json.dump({"schema_version": 1, "shapes": shapes}, sys.stdout)
PY
fi
g() { git -C repo -c user.name=bench -c user.email=bench@abharness.invalid "$@"; }
have=0
[ ! -d runs ] || have=$(find runs -mindepth 2 -maxdepth 2 -name report.json | wc -l)
t0=$(date +%s.%N)
for ((i = have + 1; i <= runs; i++)); do
  echo "nightly $i" >>repo/NOTES.md
  g add -A && g commit -q -m "history bench: commit $i"
  s=$(date +%s.%N)
  "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs \
    --run-id "$(printf 'h%03d' "$i")" --quiet --min-samples 3 --min-time 0 --max-time 0.001 \
    --warmup 1 --until-decided 0 --start-ahead 1 >"run-$i.log" 2>&1 ||
    { tail -20 "run-$i.log" >&2; echo "history_page: run $i failed" >&2; exit 1; }
  printf 'run %d of %d: %.1f s\n' "$i" "$runs" "$(echo "$(date +%s.%N) - $s" | bc)"
done
[ "$have" -ge "$runs" ] ||
  printf 'runs: %d in %.0f s\n' "$((runs - have))" "$(echo "$(date +%s.%N) - $t0" | bc)"

s=$(date +%s.%N)
"$ABH" history runs/* --out page 2>history.err || { cat history.err >&2; exit 1; }
history_s=$(echo "$(date +%s.%N) - $s" | bc)

# load URL SIZE: "READY_MS CHARTS WALL_S" of one headless load, the DOM dumped once it is done.
load() {
  local s dom
  s=$(date +%s.%N)
  dom=$(timeout 300 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
    --virtual-time-budget=30000 --window-size="$2" --dump-dom "$1" 2>/dev/null)
  local wall
  wall=$(echo "$(date +%s.%N) - $s" | bc)
  if grep -q 'id="history-data"' <<<"$dom" && ! grep -q '<pre id="errors"></pre>' <<<"$dom"; then
    echo "history_page: the page reported errors: $(grep -o '<pre id="errors">[^<]*' <<<"$dom")" >&2
    exit 1
  fi
  echo "$(grep -o 'data-ready-ms="[0-9.]*"' <<<"$dom" | grep -o '[0-9.]*' || echo -)" \
    "$(grep -o 'data-charts="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo -)" "$wall"
}
# median COLUMN < rows
median() { sort -g -k"$1" | awk -v c="$1" '{v[NR]=$c} END {print v[int((NR+1)/2)]}'; }
measure() {  # NAME URL SIZE
  local rows
  rows=$(for _ in $(seq "$loads"); do load "$2" "$3"; done)
  printf '%-28s ready %7s ms (median of %d)   charts drawn %4s of %d   chromium wall %6.2f s\n' \
    "$1" "$(median 1 <<<"$rows")" "$loads" "$(median 2 <<<"$rows")" "$shapes" \
    "$(median 3 <<<"$rows")"
}
echo '<!DOCTYPE html><html><body>empty</body></html>' >empty.html

echo
echo "history over $runs runs of $shapes shapes ($(nproc) CPUs, $("$CHROMIUM" --version 2>/dev/null | tail -1))"
printf 'abharness history (validate %d runs, build the reports, write): %.1f s\n' "$runs" "$history_s"
for f in index.html history.json chart.min.js; do
  printf '%-14s %9d bytes\n' "$f" "$(stat -c %s "page/$f")"
done
printf '%-14s %9d bytes\n' "gzip -9 html" "$(gzip -9c page/index.html | wc -c)"
measure "empty page" "file://$work/empty.html" 1280,2000
measure "?all=1 (every chart)" "file://$work/page/index.html?all=1" 1280,2000
measure "lazy, 1280x2000 window" "file://$work/page/index.html" 1280,2000
