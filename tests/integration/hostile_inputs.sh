# Hostile but fair: every file of a run directory and every input, tampered with or crafted the way
# a careless or adversarial user would, must be refused by name (or, for writes, never reach a file
# outside the run directory, or, for text shown on GitHub, never mention or link). One real run (one shape) and a second run of the very same command,
# same --run-id, under another runs root; then one case per line below. The cases are counted in
# docs/provenance.md ("The adversarial suite"). Each case prints PASS; the last line checks the count.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat >grid.json <<'JSON'
{ "schema_version": 1, "shapes": [ { "id": "m32", "params": { "m": 32, "n": 32, "k": 32 } } ] }
JSON
S=m32
base_args=(--repo repo --baseline HEAD~1 --candidate HEAD "${FAST[@]}" --quiet --color never)
run_args=("${base_args[@]}" --grid grid.json)
expect_rc 0 "$ABH" run "${run_args[@]}" --runs-root runs --run-id r1
expect_rc 0 "$ABH" run "${run_args[@]}" --runs-root runs2 --run-id r1
R=runs/r1
cases=0
ok() { cases=$((cases + 1)); pass "$*"; }
fresh() { rm -rf "$T/c"; cp -a "$R" "$T/c"; rm -f "$T/c"/report.*; }
# says WHAT: the last command's stderr contains WHAT (fixed string).
says() { grep -qF -- "$1" "$T/last.err" || { cat "$T/last.err" >&2; fail "stderr lacks: $1"; }; }
outside="$T/outside.txt"
precious() { printf 'precious\n' >"$outside"; }
untouched() { [ "$(cat "$outside")" = precious ] || fail "$1: a file outside the run directory was written"; }

fresh
expect_rc 0 "$ABH" verify "$T/c"
ok "control: an untouched copy verifies"

# 1. A valid result of another run of the same comparison, same run id, copied in.
fresh
cp runs2/r1/results/$S/B.json "$T/c/results/$S/B.json"
expect_rc 3 "$ABH" verify "$T/c"
says "results/$S/B.json: plan-digest (field 'plan_sha256')"
says "results/$S/B.json: invocation (field 'invocation.run_nonce')"
ok "foreign result of the same command and run id -> plan-digest, invocation.run_nonce"

# 2. Duplicate keys: a second samples_ns (values halved) before the real one; payload unchanged.
fresh
python3 - "$T/c/results/$S/B.json" <<'PY'
import json, sys
p = sys.argv[1]; j = json.load(open(p))
half = json.dumps([x / 2 for x in j["measurement"]["samples_ns"]])
text = open(p).read().replace('"samples_ns":', '"samples_ns": ' + half + ', "samples_ns":', 1)
open(p, "w").write(text)
PY
expect_rc 3 "$ABH" verify "$T/c"
says "results/$S/B.json: result-format"
says "duplicate key 'samples_ns' (field 'measurement.samples_ns')"
ok "duplicate samples_ns in a result -> result-format naming the key"
sed 's/"id": "m32"/"id": "m64", "id": "m32"/' grid.json >dup-grid.json
expect_rc 2 "$ABH" run "${base_args[@]}" --grid dup-grid.json --runs-root runs3
says "dup-grid.json"
says "duplicate key 'id' (field 'shapes[0].id')"
[ ! -e runs3 ] || fail "a run directory was made for a refused grid"
ok "duplicate id in grid.json -> exit 2 naming file and key, nothing created"
fresh
sed -i '0,/"run_id":/s//"run_id": "other", "run_id":/' "$T/c/plan.json"
expect_rc 3 "$ABH" verify "$T/c"
says "duplicate key 'run_id'"
ok "duplicate key in plan.json -> provenance failure naming the key"

# 3. Symbolic links inside the run directory.
fresh
precious
ln -sf "$outside" "$T/c/.lock"
expect_rc 2 "$ABH" resume "$T/c"
says ".lock is a symbolic link"
untouched ".lock link"
ok ".lock a symlink to a file outside -> refused, target untouched"
fresh
precious
rm -f "$T/c/.lock"
ln "$outside" "$T/c/.lock"
expect_rc 2 "$ABH" resume "$T/c"
says "hard links"
untouched ".lock hard link"
ok ".lock a hard link to a file outside -> refused, target untouched"
fresh
precious
rm "$T/c/results/$S/B.json"
mkdir -p "$T/c/logs/$S"
ln -sf "$outside" "$T/c/logs/$S/B.out"
ln -sf "$outside" "$T/c/logs/$S/B.err"
expect_rc 0 "$ABH" resume "$T/c" --quiet
untouched "log links"
[ -f "$T/c/logs/$S/B.err" ] && [ ! -L "$T/c/logs/$S/B.err" ] || fail "the log link was not replaced"
ok "logs/<shape>/<arm>.{out,err} symlinks -> replaced by the worker's logs, target untouched"
fresh
mkdir "$T/elsewhere"
mv "$T/c/results" "$T/elsewhere/results"
ln -s "$T/elsewhere/results" "$T/c/results"
for cmd in verify report resume; do
  expect_rc 3 "$ABH" $cmd "$T/c"
  says "results: unplanned-file"
done
rm "$T/elsewhere/results/$S/B.json"
expect_rc 3 "$ABH" resume "$T/c"
[ ! -e "$T/elsewhere/results/$S/B.json" ] || fail "resume wrote a result outside the run directory"
ok "results/ a symlink to a directory outside -> verify, report and resume refuse, nothing written"
fresh
mv "$T/c/results/$S" "$T/elsewhere/$S"
ln -s "$T/elsewhere/$S" "$T/c/results/$S"
expect_rc 3 "$ABH" verify "$T/c"
says "results/$S: unplanned-file"
ok "results/<shape> a symlink -> unplanned-file"
fresh
mv "$T/c/plan.json" "$T/elsewhere/plan.json"
ln -s "$T/elsewhere/plan.json" "$T/c/plan.json"
expect_rc 2 "$ABH" verify "$T/c"
says "plan.json is a symbolic link"
ok "plan.json a symlink -> refused"
fresh
plugin=$(jget "$T/c/plan.json" 'j["variants"][1]["plugin"]')
cp "$T/c/$plugin" "$T/elsewhere/plugin.so"
ln -sf "$T/elsewhere/plugin.so" "$T/c/$plugin"
expect_rc 3 "$ABH" verify "$T/c"
says "$plugin: plugin-file"
ok "a variant's plugin a symlink (same bytes) -> plugin-file"
fresh
mkfifo "$T/c/results/$S/A2.json.fifo"
rm "$T/c/results/$S/A2.json"
mv "$T/c/results/$S/A2.json.fifo" "$T/c/results/$S/A2.json"
expect_rc 3 timeout 60 "$ABH" verify "$T/c"
says "results/$S/A2.json: result-format: expected a regular file, found a FIFO"
ok "a FIFO in place of a result -> refused without blocking"
fresh
mkdir -p "$T/c/logs/$S"
rm "$T/c/results/$S/A1.json"
ln -s /etc/hostname "$T/c/logs/$S/A1.failure.json"
expect_rc 4 "$ABH" verify "$T/c"
ok "a failure record that is a symlink -> not followed, the arm is incomplete"

# 4. plan.json edited: a recipe flag, two tasks swapped; and a forger who recomputes the plan's own
# digest still fails every result's plan_sha256.
fresh
sed -i 's/"-O2"/"-O3"/' "$T/c/plan.json"
expect_rc 3 "$ABH" verify "$T/c"
says "plan-digest (field 'payload_sha256')"
ok "recipe argv -O2 -> -O3 in plan.json -> plan-digest"
swap_tasks() { edit_json "$T/c/plan.json" 't = j["tasks"]; t[0], t[2] = t[2], t[0]' "$1"; }
fresh
swap_tasks plain
expect_rc 3 "$ABH" verify "$T/c"
says "plan-digest (field 'payload_sha256')"
ok "tasks A1 <-> A2 swapped in plan.json -> plan-digest"
fresh
swap_tasks redigest
expect_rc 3 "$ABH" verify "$T/c"
says "results/$S/A1.json: plan-digest (field 'plan_sha256')"
expect_rc 3 "$ABH" report "$T/c"
ok "tasks swapped and the plan digest forged -> every result's plan_sha256 refuses"
fresh
python3 - "$T/c/plan.json" <<'PY'
import json, sys
p = sys.argv[1]; j = json.load(open(p)); j["schema_version"] = 1
del j["run_nonce"]; del j["payload_sha256"]
json.dump(j, open(p, "w"), indent=2)
PY
expect_rc 2 "$ABH" verify "$T/c"
says "another version of abharness"
ok "a plan of schema 1 (before run nonces) -> refused by version with the fix"

# Also: a built plugin changed after the run (one byte appended) -> verify names the file.
fresh
printf 'x' >>"$T/c/$plugin"
expect_rc 3 "$ABH" verify "$T/c"
says "$plugin: plugin-file (field 'variants[1].plugin_sha256')"
ok "a byte appended to a built plugin -> plugin-file naming it"

# 6. Paths that are not UTF-8: refused before anything is built, naming the argument.
bad=$(printf 'runs\xff')
expect_rc 2 "$ABH" run "${run_args[@]}" --runs-root "$bad"
says "--runs-root"
says "not UTF-8"
[ ! -e "$bad" ] || fail "a runs root that is not UTF-8 was created"
ok "--runs-root with byte 0xff -> exit 2 naming it, nothing created"
ln -s repo "$(printf 'repo\xfe')"
expect_rc 2 "$ABH" run --repo "$(printf 'repo\xfe')" --baseline HEAD~1 --candidate HEAD \
  --grid grid.json "${FAST[@]}" --quiet --runs-root runs4
says "--repo"
says "not UTF-8"
[ ! -e runs4 ] || fail "a run directory was made for a repository path that is not UTF-8"
ok "--repo with byte 0xfe -> exit 2 naming it, nothing created"

# 7. Numbers that overflow a double.
sed 's/"m": 32/"m": 1e999/' grid.json >huge-grid.json
expect_rc 2 "$ABH" run "${base_args[@]}" --grid huge-grid.json --runs-root runs5
says "huge-grid.json"
says "1e999 (field 'shapes[0].params.m') is out of range"
ok "1e999 in grid.json -> exit 2 naming file and field"
cp -a repo repo-huge
sed -i 's/"timeout_s": 300/"timeout_s": 1e999/' repo-huge/abharness.json
git_q -C repo-huge commit -qam "huge timeout"
expect_rc 2 "$ABH" run --repo repo-huge --baseline HEAD~1 --candidate HEAD --grid grid.json \
  "${FAST[@]}" --quiet --runs-root runs6
says "abharness.json"
says "(field 'plugins.cpu.timeout_s') is out of range"
ok "1e999 in abharness.json -> exit 2 naming file and field"

# 8. Control characters in user text are escaped, never cut a message.
printf '{ "schema_version": 1, "shapes": [ { "id": "a\\u0000b\\u001b[31m", "params": { "m": 32, "n": 32, "k": 32 } } ] }\n' >nul-grid.json
expect_rc 2 "$ABH" run "${base_args[@]}" --grid nul-grid.json --runs-root runs7
# The grid schema reports the id as JSON writes it (\u escapes); the whole message survives.
says 'a\u0000b\u001b[31m'
says "1-100 characters"
! grep -q $'\x1b' "$T/last.err" || fail "an escape character reached the terminal"
ok "NUL and ESC in a shape id -> escaped, reason and fix kept"
expect_rc 2 "$ABH" run "${run_args[@]}" --runs-root runs7 --run-id "$(printf 'a\nb')"
says "'a\\nb'"
ok "a newline in --run-id -> escaped on one line"

# 11. A runs root inside the kernel repository that git does not ignore: refused, and nothing is
# written into the repository; an ignored one is fine.
expect_rc 2 "$ABH" run "${run_args[@]}" --runs-root repo
says "inside the work tree of the kernel repository"
[ ! -e repo/.gitignore ] || fail "abharness wrote repo/.gitignore"
[ -z "$(git -C repo status --porcelain --ignored)" ] || fail "the repository changed"
ok "--runs-root = the repository -> exit 2, nothing written into it"
echo "runs/" >>repo/.git/info/exclude
expect_rc 0 "$ABH" run "${run_args[@]}" --runs-root repo/runs --run-id inside
[ ! -e repo/.gitignore ] || fail "abharness wrote repo/.gitignore"
ok "a runs root inside the repository that git ignores -> accepted, no .gitignore written"

# 12. Results that are not files, away from and at their planned names.
fresh
mkfifo "$T/c/results/$S/B2.json"
expect_rc 3 timeout 60 "$ABH" verify "$T/c"
says "results/$S/B2.json: unplanned-file: expected only planned results/<shape>/<arm>.json, found a FIFO"
ok "a FIFO beside the results -> unplanned-file, without blocking"
fresh
rm "$T/c/results/$S/A1.json" && mkdir -p "$T/c/results/$S/A1.json/inside"
expect_rc 3 "$ABH" verify "$T/c"
says "results/$S/A1.json: result-format: expected a regular file, found a directory"
ok "a directory in place of a result -> result-format"

# 13. Text that GitHub would turn into mentions and issue links: a failure record that quotes
# users, teams and issues reaches the PR comment quoted, never as a mention or a link.
fresh
rm "$T/c/results/$S/B.json"
mkdir -p "$T/c/logs/$S"
printf '{"reason": "exit code 3: ask @octocat or @org/kernels, see #1 and GH-2"}\n' \
  >"$T/c/logs/$S/B.failure.json"
expect_rc 4 "$ABH" report "$T/c" --quiet
for ref in @octocat @org/kernels '#1' GH-2; do
  ! grep -qF "$ref" "$T/c/report.pr.md" || fail "report.pr.md links $ref: $(grep -F "$ref" "$T/c/report.pr.md")"
done
grep -qF 'ask @&#8203;octocat or @&#8203;org/kernels, see #&#8203;1 and GH-&#8203;2' \
  "$T/c/report.pr.md" || fail "report.pr.md lacks the quoted reason: $(cat "$T/c/report.pr.md")"
ok "mentions and issue references in a failure reason -> quoted in report.pr.md, not linked"

# 14. compare: two runs of one run id are two runs; one run under another name, or a copy of it,
# is one run given twice.
expect_rc 0 "$ABH" compare runs/r1 runs2/r1 --print markdown
says_out() { grep -qF -- "$1" "$T/last.out" || fail "stdout lacks: $1"; }
says_out "[1] r1 (runs/r1)"
says_out "[2] r1 (runs2/r1)"
ok "compare of two runs with one run id -> compared, labelled by directory"
ln -sfn "$T/$R" "$T/alias"
expect_rc 2 "$ABH" compare $R "$T/alias"
says "are the same run directory ($T/$R)"
ok "compare of a run and a link to it -> refused as the same run directory"
fresh
expect_rc 2 "$ABH" compare $R "$T/c"
says "are copies of one run (the same run nonce"
ok "compare of a run and a copy of it -> refused as copies of one run"

[ "$cases" = 33 ] || fail "ran $cases cases, expected 33 (update docs/provenance.md when this changes)"
echo "hostile_inputs: $cases cases passed"
