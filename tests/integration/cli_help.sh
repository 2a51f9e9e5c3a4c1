# --help shows examples; bad input is a usage error that names the fix.
source "$ABH_TESTLIB"
expect_rc 0 "$ABH" --help
grep -q "Examples:" "$T/last.out" || fail "abharness --help has no examples"
expect_rc 0 "$ABH" run --help
grep -q "abharness run --baseline" "$T/last.out" || fail "run --help has no example"
# `help VERB` prints what `VERB --help` prints; typos are answered with what was likely meant.
expect_rc 0 "$ABH" help run
cp "$T/last.out" help_run.out
expect_rc 0 "$ABH" run --help
cmp -s help_run.out "$T/last.out" || fail "help run differs from run --help"
expect_rc 2 "$ABH" rnu
grep -qF "unknown command 'rnu': did you mean 'run'?" "$T/last.err" || fail "no suggestion for rnu"
expect_rc 2 "$ABH" help rnu
grep -qF "did you mean 'run'?" "$T/last.err" || fail "no suggestion for help rnu"
expect_rc 2 "$ABH" run --base HEAD --candidate HEAD
grep -qF "unknown option '--base': did you mean --baseline?" "$T/last.err" ||
  fail "no suggestion for --base"
# The worker's bad invocations are usage errors too (exit 2, which the orchestrator reads), not
# CLI11's own codes.
expect_rc 2 "$WORKER" run --run-dir "$T"
grep -q -- "--shape is required" "$T/last.err" "$T/last.out" || fail "worker does not name the missing flag"
expect_rc 2 "$WORKER" no-such-subcommand
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
expect_rc 2 "$ABH" run --repo repo --baseline no-such-rev --candidate HEAD --grid grid.json --runs-root runs
grep -q "no-such-rev" "$T/last.err" || fail "bad revision not named"
echo '{"schema_version":1,"shapes":[{"id":"../evil","params":{"m":1,"n":1,"k":1}}]}' > bad.json
expect_rc 2 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid bad.json --runs-root runs
grep -q "bad.json" "$T/last.err" && grep -q "shape id" "$T/last.err" || fail "escaping shape id not refused by name"
expect_rc 2 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs --target nope
grep -q "nope" "$T/last.err" || fail "unknown target not named"
expect_rc 2 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --max-noise 3
grep -q -- "--max-noise" "$T/last.err" || fail "bad --max-noise not named"
pass "cli help and usage errors"
