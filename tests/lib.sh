# Shared helpers for the integration tests (sourced). Each test runs in a fresh temporary
# directory that is removed on exit; binaries come from ABH_BIN.
set -euo pipefail
: "${ABH_BIN:?run through ctest}" "${ABH_SOURCE_DIR:?run through ctest}"
T=$(mktemp -d /tmp/abh-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T"
ABH="$ABH_BIN/abharness"
WORKER="$ABH_BIN/abharness-worker"
# Each test's runs take their measuring locks (orchestrator/measuring_lock.hpp) among themselves:
# tests run side by side under ctest -j, and one waiting for another's lock could outlast the
# limits it waits for states within. measuring_lock.sh tests the machine-wide default.
export ABH_LOCK_DIR="$T/locks"

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }

# jq-like reads with python3: jget FILE 'expr on j'
jget() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
# edit_json FILE PYTHON [redigest]: runs PYTHON on the parsed file as `j` and writes it back; with
# `redigest` the payload digest is recomputed as a forger would (tests/json_edit.py says how).
edit_json() { python3 "$ABH_SOURCE_DIR/tests/json_edit.py" "$@"; }

# python_with MODULE PACKAGE: the path of a python3 (the system one first) that imports MODULE,
# or fail naming the Debian package that brings it.
python_with() {
  local p
  for p in /usr/bin/python3 python3; do
    if "$p" -c "import $1" 2>/dev/null; then command -v "$p"; return; fi
  done
  fail "no python3 with $1: install $2 (scripts/install-deps.sh does)"
}
# A python3 that has jsonschema (the system one: python3-jsonschema).
schema_python() { python_with jsonschema python3-jsonschema; }
git_q() { git -c user.name=t -c user.email=t@t.invalid "$@"; }

# A small grid that keeps a run to a few seconds.
small_grid() {
  cat > "${1:-grid.json}" <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m32_n32_k32", "params": { "m": 32, "n": 32, "k": 32 } },
  { "id": "m96_n64_k80", "params": { "m": 96, "n": 64, "k": 80 } } ] }
JSON
}

# Four CPU shapes, for tests that kill or cancel a sweep part-way and resume it.
four_shape_grid() {
  cat > "${1:-grid.json}" <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "s40", "params": { "m": 40, "n": 40, "k": 40 } },
  { "id": "s64", "params": { "m": 64, "n": 64, "k": 64 } },
  { "id": "s80", "params": { "m": 80, "n": 48, "k": 72 } },
  { "id": "s96", "params": { "m": 96, "n": 96, "k": 32 } } ] }
JSON
}

# Arms of about half a second, so that kills and cancels land inside workers as well as between
# them.
SLOW=(--min-samples 5 --min-time 0.4 --max-time 0.5 --max-noise 0.0001 --warmup 1 --until-decided 0)

# Fast measurement settings for tests (the defaults favour rigour over speed). Both plan no
# conditional blocks (the default, --until-decided auto, gives a CPU run up to 3 per shape, as its
# results call for them), so that a test knows how many arms its run has; the tests of the
# extension and of verdicts (verdicts.sh) give --until-decided themselves.
FAST=(--min-samples 5 --min-time 0.01 --max-time 0.2 --warmup 1 --until-decided 0)

# wait_until SECONDS CMD...: runs CMD every 0.05 s until it succeeds (status 0) or SECONDS of wall
# clock have passed (status 1). A limit in seconds, not in polls: a loaded machine stretches each
# poll (a `squeue` call, a `pgrep`) and a count of polls with it.
wait_until() {
  local end=$(($(date +%s) + $1))
  shift
  until "$@"; do
    (($(date +%s) < end)) || return 1
    sleep 0.05
  done
}

# wait_for_plan PID RUN_DIR ERR_FILE: waits, while the run PID lives, for RUN_DIR/plan.json (the
# two builds before it take ~40 s on a loaded 2-core machine), up to 5 min; fails otherwise.
wait_for_plan() {
  local pid=$1 run=$2 err=$3
  for _ in $(seq 1 6000); do
    [ -f "$run/plan.json" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -f "$run/plan.json" ] || fail "no plan (the run exited, or 5 min passed): $(cat "$err")"
}

# expect_rc WANT CMD...: runs CMD, fails the test unless it exits with WANT.
expect_rc() {
  local want=$1; shift
  set +e; "$@" >"$T/last.out" 2>"$T/last.err"; local rc=$?; set -e
  if [ "$rc" != "$want" ]; then
    cat "$T/last.out" "$T/last.err" >&2
    fail "expected exit $want, got $rc: $*"
  fi
}
