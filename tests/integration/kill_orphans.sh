# Nothing outlives a SIGKILLed orchestrator: a build's processes (a recipe that starts a background
# `sleep`, the compiler), and a helper process that the plugin forked inside a worker. Each process
# to watch is a `sleep` with a number unique to this test, so that pgrep finds only ours; whatever
# is found is killed by pid on exit, even when the test fails. Also: a build that prints 40 MB
# succeeds, with a bounded build.log that says how much it left out.
source "$ABH_TESTLIB"
mark=$((7000000 + $$ % 1000000))
survivors() { pgrep -f "sleep $1" || true; }
cleanup_sleeps() {
  local p
  for p in $(survivors "$mark") $(survivors "$((mark + 1))"); do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup_sleeps EXIT
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m32", "params": { "m": 32, "n": 32, "k": 32 } } ] }
JSON

# wait_for MARK: until a `sleep MARK` runs (at most 5 min: one or two builds come first, ~40 s
# on the loaded 2-core machine).
wait_for() {
  running() { [ -n "$(survivors "$1")" ]; }
  wait_until 300 running "$1" || fail "no 'sleep $1' started in 5 min"
}

# kill_when_running MARK WHAT RUN_ID FLAGS...: starts a run, SIGKILLs the orchestrator once
# `sleep MARK` runs, and fails when that sleep (WHAT) is still alive a second later.
kill_when_running() {
  local m=$1 what=$2 id=$3 orch left
  shift 3
  "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json "$@" --quiet \
    --runs-root runs --run-id "$id" >/dev/null 2>&1 &
  orch=$!
  wait_for "$m"
  kill -9 "$orch"
  wait "$orch" 2>/dev/null || true
  sleep 1
  left=$(survivors "$m")
  [ -z "$left" ] || fail "$what 'sleep $m' ($left) outlived the killed orchestrator"
}

# shell_recipe PREFIX: the CPU plugin's build becomes a shell recipe that runs PREFIX first.
shell_recipe() {
  python3 - repo/abharness.json "$1" <<'PY'
import json, sys
p, prefix = sys.argv[1], sys.argv[2]
j = json.load(open(p)); r = j["plugins"]["cpu"]
cmd = " ".join(a.replace("${ABHARNESS_INCLUDE}", "$ABHARNESS_INCLUDE") for a in r["argv"])
r["argv"] = [prefix + cmd]
r["shell"] = True
r["env"] = {"ABHARNESS_INCLUDE": "${ABHARNESS_INCLUDE}"}
json.dump(j, open(p, "w"), indent=2)
PY
}

# A build whose recipe starts a background sleep, then compiles slowly.
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
shell_recipe "sleep $mark & sleep 30; "
git_q -C repo commit -qam "slow build that leaves a background job"
kill_when_running "$mark" "the recipe's background" b "${FAST[@]}"
pass "SIGKILL during a build: no process of the recipe survives"

# A plugin that forks a helper when it is loaded (a static initializer), measured by a worker.
rm -rf repo
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat >>repo/kernel.cpp <<EOF

#include <unistd.h>
namespace {
// Forks a helper that would outlive the worker if nobody killed it.
const int forked_helper = [] {
  if (::fork() == 0) {
    ::execlp("sleep", "sleep", "$((mark + 1))", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return 0;
}();
}  // namespace
EOF
git_q -C repo commit -qam "a plugin that forks a helper"
kill_when_running "$((mark + 1))" "the plugin's helper" w \
  --min-samples 5 --min-time 5 --max-time 10 --warmup 1
[ -z "$(pgrep -f "abharness-worker run --run-dir $T/runs/w" || true)" ] || fail "a worker outlived the orchestrator"
pass "SIGKILL mid-arm: neither the worker nor the helper its plugin forked survives"

# A build that prints 40 MB succeeds; its log keeps a bounded head and tail and says so.
rm -rf repo
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
shell_recipe "yes 'a verbose build line' | head -c 40000000; "
git_q -C repo commit -qam "a verbose build"
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  "${FAST[@]}" --quiet --runs-root runs --run-id v
log=runs/v/variants/candidate/build.log
size=$(stat -c %s "$log")
[ "$size" -lt 6000000 ] || fail "build.log is $size bytes: not bounded"
grep -q "bytes of output left out here" "$log" || fail "build.log does not say what it left out"
big=$(find runs -type f -size +8M | head -1)
[ -z "$big" ] || fail "a file of more than 8 MB was left: $big"
pass "a 40 MB build output: build succeeds, build.log $size bytes, no scratch file"
