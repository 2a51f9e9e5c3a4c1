#!/usr/bin/env bash
# What a very large grid costs abharness itself, apart from measuring: for each N (default 3,000
# and 50,000 tiny shapes of the CPU example, A/B/A, so 3·N planned arms) it prints
#   - first arm: seconds from `abharness run` starting until the first worker process exists
#     (its log file appears), with both variants' builds already cached;
#   - worker plan read: what each worker of the run logged for reading the plan and finding its
#     task (median and max over the arms that ran), and the seconds from the worker's start until
#     it had read the plan and hashed its binaries (logged by every version of the worker);
#   - verify: wall time and max RSS of `abharness verify` on the run directory (/usr/bin/time -v);
#   - report: the same for `abharness report --quiet`.
# Targets at 50,000 shapes: first arm <= 5 s, a worker's plan read <= 0.1 s, verify <= 10 s and
# <= 300 MB, report <= 15 s.
#
# What is real and what is not. Every number comes from the real binaries on a real run
# directory: plan.json is the one `abharness run` wrote for all N shapes, and every result in it
# was measured by a real worker (fixed stopping rule, 3 samples, no warm-up iterations, so an arm
# is short). A sweep of 150,000 worker processes does not fit on a 2-core machine, so the sweep is
# stopped (SIGKILL, as an interrupted run) after ARMS results; verify and report then validate and
# report a run whose plan has all 3·N arms and whose results are the first ARMS of them: every
# planned arm is looked up, every shape gets a row, and the arms not run are reported as such
# (exit 4). Nothing is copied or fabricated. What this leaves out: the per-result cost of the
# 3·N - ARMS results that were not measured (parsing and checking one result file; docs/scale.md
# gives it per result, which is linear in their number).
#
# usage: bench/big_grid.sh [N ...]      (default: 3000 50000)
#        BIN=<dir with abharness> (default build/bin), ARMS=<results per run> (default 300),
#        WORK=<dir> (kept afterwards; default a new temporary directory)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
ARMS=${ARMS:-300}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(3000 50000)
work=${WORK:-$(mktemp -d /tmp/abh-big-grid.XXXXXX)}
mkdir -p "$work"
cd "$work"
[ -d repo ] || "$root/examples/make-demo-repo.sh" cpu repo >/dev/null
# Tiny problems (the dry run makes each distinct one once) and the shortest honest arm.
FAST=(--stopping fixed --min-samples 3 --max-samples 3 --warmup 0 --min-time 0 --max-time 1)

# grid N FILE: N shapes, ids s0 .. s<N-1>, sizes 4 to 16
grid() {
  python3 - "$1" "$2" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
shapes = [{"id": "s%d" % i, "params": {"m": 4 + i % 13, "n": 4 + i % 7, "k": 4 + i % 5}}
          for i in range(n)]
json.dump({"schema_version": 1, "shapes": shapes}, open(path, "w"))
PY
}

# rss_wall TIME_FILE: "<wall> s, <max RSS> MiB" from /usr/bin/time -v's output
rss_wall() {
  python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", t)
wall = (int(m.group(1) or 0) * 60 + int(m.group(2))) * 60 + float(m.group(3))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
print("%.2f s, %.0f MiB" % (wall, rss / 1024))
PY
}

# stats_of SED_EXPR FILE...: median and max of the seconds SED_EXPR takes from the workers' logs
stats_of() {
  local expr=$1
  shift
  cat "$@" 2>/dev/null | sed -n "$expr" | python3 -c "
import statistics, sys
v = [float(x) for x in sys.stdin if x.strip()]
print('median %.3f s, max %.3f s over %d workers' % (statistics.median(v), max(v), len(v)) if v
      else 'not logged')"
}

# The sweep's own process (exec): the bench stops it by its pid, as an interrupted run.
run() {
  exec "$BIN/abharness" run --repo repo --baseline HEAD~1 --candidate HEAD --target cpu \
    --runs-root runs "${FAST[@]}" --quiet "$@"
}

# Both variants built once (the runs root's build cache), outside every measured run.
grid 2 tiny.json
[ -d runs/cache ] || (run --grid tiny.json --run-id cache) >cache.out 2>&1 ||
  { cat cache.out; exit 1; }

echo "== abharness $("$BIN/abharness" --version | head -1); $(nproc) CPUs; work directory $work"
for n in "${sizes[@]}"; do
  id=n$n
  rm -rf "runs/$id"
  grid "$n" "grid$n.json"
  start=$(date +%s.%N)
  (run --grid "grid$n.json" --run-id "$id") >"$id.out" 2>"$id.err" &
  pid=$!
  first=""
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$first" ] && compgen -G "runs/$id/logs/s*/*.out" >/dev/null; then
      first=$(python3 -c "import sys; print('%.2f' % ($(date +%s.%N) - $start))")
    fi
    if [ -n "$first" ] && [ -d "runs/$id/results" ] &&
      [ "$(find "runs/$id/results" -name '*.json' | wc -l)" -ge "$ARMS" ]; then
      break
    fi
    sleep 0.05
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -n "$first" ] || { echo "N=$n: no arm started"; cat "$id.err"; exit 1; }
  results=$(find "runs/$id/results" -name '*.json' | wc -l)
  plan_mb=$(python3 -c "import os; print('%.1f' % (os.path.getsize('runs/$id/plan.json') / 1e6))")
  read_stats=$(stats_of 's/.*plan read in \([0-9.]*\) s.*/\1/p' runs/"$id"/logs/s*/*.out)
  ready_stats=$(stats_of 's/^\[\([0-9.]*\) s\] plan read, binaries hashed.*/\1/p' \
    runs/"$id"/logs/s*/*.out)
  set +e
  /usr/bin/time -v "$BIN/abharness" verify "runs/$id" >"$id.verify.out" 2>"$id.verify.time"
  verify_rc=$?
  /usr/bin/time -v "$BIN/abharness" report "runs/$id" --quiet >"$id.report.out" \
    2>"$id.report.time"
  report_rc=$?
  set -e
  echo "N=$n shapes ($((3 * n)) planned arms, plan.json $plan_mb MB, $results results measured)"
  echo "  first arm started:  $first s after abharness run"
  echo "  worker plan read:   $read_stats"
  echo "  worker start to plan read, binaries hashed: $ready_stats"
  echo "  verify:             $(rss_wall "$id.verify.time") (exit $verify_rc)"
  echo "  report:             $(rss_wall "$id.report.time") (exit $report_rc)"
done
