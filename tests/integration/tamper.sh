# Fail-closed provenance: one real run, then one tampered copy per validation rule
# (docs/provenance.md). Each copy must be refused by both `abharness verify` and `abharness report`
# with exit 3, naming the file, the rule and the field, and `report` must write no report.
# Edits that must reach a rule past the digest check recompute payload_sha256 the way the harness
# does (sorted keys, no whitespace), so the rule under test fires, not the digest rule.
source "$ABH_TESTLIB"
"$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid grid.json
run_args=(--repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json --runs-root runs
  "${FAST[@]}" --quiet --color never)
expect_rc 0 "$ABH" run "${run_args[@]}" --run-id r1
# A second run of the same comparison: its results are perfectly valid — for another run.
expect_rc 0 "$ABH" run "${run_args[@]}" --run-id r2
S1=m32_n32_k32
S2=m96_n64_k80

fresh() { rm -rf "$T/c"; cp -a runs/r1 "$T/c"; rm -f "$T/c"/report.*; }

# refused NAME FILE RULE FIELD: verify and report both exit 3 and name FILE, RULE and FIELD in one
# problem line; report writes nothing.
refused() {
  local name=$1 file=$2 rule=$3 field=$4 want
  want="$file: $rule"
  [ -n "$field" ] && want+=" (field '$field')"
  for cmd in verify report; do
    expect_rc 3 "$ABH" "$cmd" "$T/c"
    grep -qF -- "$want" "$T/last.err" || { cat "$T/last.err" >&2; fail "$name: $cmd did not report '$want'"; }
  done
  ! ls "$T/c"/report.* >/dev/null 2>&1 || fail "$name: a report was written from a refused run"
  pass "$name -> $want"
}

# Controls: an untouched copy passes, and so does one whose digest was recomputed without an edit
# (so the helper's digest is the harness's, and later cases test their rule, not the helper).
fresh
expect_rc 0 "$ABH" verify "$T/c"
grep -q "verified 6 of 6" "$T/last.out" || fail "control copy: $(cat "$T/last.out")"
edit_json "$T/c/results/$S1/A1.json" "pass" redigest
expect_rc 0 "$ABH" verify "$T/c"
expect_rc 0 "$ABH" report "$T/c" --quiet
[ -f "$T/c/report.md" ] || fail "control copy: report not written"

# payload-digest: one sample edited (the classic "make the number look better").
fresh
edit_json "$T/c/results/$S2/B.json" 'j["measurement"]["samples_ns"][0] *= 0.5'
refused edit-sample "results/$S2/B.json" payload-digest payload_sha256
# The refusal says what to do; resume refuses the same way, and doing what it says (the file moved
# out of the run, kept) has resume measure that arm again into a run that verifies.
grep -q "what to do: 1 result file(s) above fail their checks .*move them out of the run directory" \
  "$T/last.err" || fail "edit-sample: no repair hint: $(cat "$T/last.err")"
expect_rc 3 "$ABH" resume "$T/c" --quiet
grep -q "what to do: 1 result file(s) above" "$T/last.err" || fail "resume: no repair hint: $(cat "$T/last.err")"
mkdir -p "$T/kept" && mv "$T/c/results/$S2/B.json" "$T/kept/"
expect_rc 0 "$ABH" resume "$T/c" --quiet
expect_rc 0 "$ABH" verify "$T/c"
grep -q "verified 6 of 6" "$T/last.out" || fail "after the repair: $(cat "$T/last.out")"
pass "a result that fails its checks: the refusal says how to measure its arm again, and that works"

# payload-digest: the digest itself altered; and a digest of the wrong JSON type.
fresh
edit_json "$T/c/results/$S1/A2.json" 'j["payload_sha256"] = "0" * 64'
refused alter-digest "results/$S1/A2.json" payload-digest payload_sha256
fresh
edit_json "$T/c/results/$S1/A2.json" 'j["payload_sha256"] = 12345'
refused digest-not-a-string "results/$S1/A2.json" payload-digest payload_sha256

# invocation: two arms' files swapped (A1 <-> B: other arm, other variant).
fresh
mv "$T/c/results/$S2/A1.json" "$T/c/swap.json"
mv "$T/c/results/$S2/B.json" "$T/c/results/$S2/A1.json"
mv "$T/c/swap.json" "$T/c/results/$S2/B.json"
refused swap-arms "results/$S2/A1.json" invocation invocation.arm
grep -qF "results/$S2/B.json: invocation (field 'invocation.arm'): expected B, found A1" "$T/last.err" \
  || fail "swap-arms: the other file of the swap is not named"
grep -qF "results/$S2/A1.json: source-identity (field 'source.commit')" "$T/last.err" \
  || fail "swap-arms: the variant's source identity mismatch is not named"

# invocation: a valid result copied in from another run of the very same comparison.
fresh
cp runs/r2/results/$S1/B.json "$T/c/results/$S1/B.json"
refused foreign-run "results/$S1/B.json" invocation invocation.run_id

# invocation: a result of another shape moved into this shape's place.
fresh
cp "$T/c/results/$S2/A2.json" "$T/c/results/$S1/A2.json"
refused other-shape "results/$S1/A2.json" invocation invocation.shape

# plugin-sha256: the plugin replaced after the plan (still loadable, one byte longer), then an arm
# measured with it by the worker.
fresh
printf '\0' >>"$T/c/variants/candidate/libcpugemm.so"
rm "$T/c/results/$S1/B.json"
"$WORKER" run --run-dir "$T/c" --shape $S1 --arm B >/dev/null 2>&1 || fail "worker with replaced plugin"
refused plugin-replaced "results/$S1/B.json" plugin-sha256 plugin_sha256
# ... and resume refuses to run anything with it.
expect_rc 2 "$ABH" resume "$T/c"
grep -q "candidate plugin variants/candidate/libcpugemm.so changed" "$T/last.err" \
  || fail "resume with a replaced plugin: $(cat "$T/last.err")"

# A replaced plugin whose planned bytes the runs root's build cache still holds: verify and resume
# give the command that restores it, which loses nothing measured, and after it the run verifies.
rm -rf runs/c2 && cp -a runs/r1 runs/c2 && rm -f runs/c2/report.*
printf '\0' >>runs/c2/variants/candidate/libcpugemm.so
expect_rc 3 "$ABH" verify runs/c2
grep -q "what to do (variants/candidate/libcpugemm.so): the build cache holds the plugin the plan hashed: restore it (cp [^ ]*/runs/.cache/builds/[0-9a-f]*/libcpugemm.so [^ ]*/runs/c2/variants/candidate/libcpugemm.so)" \
  "$T/last.err" || fail "verify: no restore command: $(cat "$T/last.err")"
expect_rc 2 "$ABH" resume runs/c2
restore=$(grep -o "restore it (cp [^)]*)" "$T/last.err" | sed 's/^restore it (//; s/)$//')
[ -n "$restore" ] || fail "resume: no restore command: $(cat "$T/last.err")"
eval "$restore"
expect_rc 0 "$ABH" verify runs/c2
expect_rc 0 "$ABH" resume runs/c2 --quiet
rm -rf runs/c2
pass "a replaced plugin the build cache still holds: verify and resume say how to restore it; restored, the run verifies"

# worker-sha256: an arm measured by another worker binary.
fresh
# The worker is its executable, engine library and Python front end (core/model/worker_protocol.hpp):
# a copy of all of them, with one byte more in the executable.
mkdir "$T/bin2" && cp -r "$WORKER" "$(dirname "$WORKER")/libabharness_worker.so" \
  "$(dirname "$WORKER")/python" "$T/bin2/" && printf '\0' >>"$T/bin2/abharness-worker"
rm "$T/c/results/$S2/A2.json"
"$T/bin2/abharness-worker" run --run-dir "$T/c" --shape $S2 --arm A2 >/dev/null 2>&1 \
  || fail "copied worker did not run"
refused worker-replaced "results/$S2/A2.json" worker-sha256 worker_sha256

# environment: the result says it ran on another host / CPU (digest recomputed).
fresh
edit_json "$T/c/results/$S1/A1.json" 'j["environment"]["hostname"] = "some-other-host"' redigest
refused env-hostname "results/$S1/A1.json" environment environment.hostname
fresh
edit_json "$T/c/results/$S2/B.json" 'j["environment"]["cpu_model"] += " (different)"' redigest
refused env-cpu "results/$S2/B.json" environment environment.cpu_model
fresh
edit_json "$T/c/results/$S2/B.json" 'j["environment"]["libraries"]["cpu-gemm-kernel"] = "other"' redigest
refused env-library "results/$S2/B.json" environment environment.libraries.cpu-gemm-kernel

# schema-version: bumped, with and without a recomputed digest.
fresh
edit_json "$T/c/results/$S1/B.json" 'j["schema_version"] += 1'
refused schema-bump "results/$S1/B.json" schema-version schema_version
fresh
edit_json "$T/c/results/$S1/B.json" 'j["schema_version"] = "1"' redigest
refused schema-string "results/$S1/B.json" schema-version schema_version

# harness-version, source-identity, samples, correctness: each edited with a valid digest.
fresh
edit_json "$T/c/results/$S2/A1.json" 'j["harness_version"] = "0.0.1-other"' redigest
refused harness-version "results/$S2/A1.json" harness-version harness_version
fresh
# (the source identity is self-checking, so the tamper is a whole, valid identity: the candidate's)
edit_json "$T/c/results/$S2/A2.json" 'j["source"] = json.load(open("'"$T"'/c/plan.json"))["variants"][1]["source"]' redigest
refused source-identity "results/$S2/A2.json" source-identity source.commit
fresh
edit_json "$T/c/results/$S1/A1.json" 'j["measurement"]["samples_ns"] = []' redigest
refused no-samples "results/$S1/A1.json" samples measurement.samples_ns
fresh
# A clock list that no longer pairs one reading with each sample (GPU results carry one).
edit_json "$T/c/results/$S1/A2.json" 'j["measurement"]["clock"]["sample_mhz"] = [1500.0] * (len(j["measurement"]["samples_ns"]) + 1)' redigest
refused clock-count "results/$S1/A2.json" samples measurement.clock.sample_mhz
fresh
edit_json "$T/c/results/$S1/B.json" 'j["correctness"]["passed"] = False' redigest
refused correctness "results/$S1/B.json" correctness correctness.passed

# result-format: a truncated file, a non-object, a field of the wrong type, a negative sample.
fresh
head -c 300 "$T/c/results/$S2/B.json" >"$T/trunc" && mv "$T/trunc" "$T/c/results/$S2/B.json"
refused truncated "results/$S2/B.json" result-format ""
fresh
echo '[1, 2, 3]' >"$T/c/results/$S2/B.json"
refused not-an-object "results/$S2/B.json" result-format ""
fresh
edit_json "$T/c/results/$S2/A1.json" 'j["pid"] = "1234"' redigest
refused wrong-type "results/$S2/A1.json" result-format ""
grep -q "field 'pid': expected an integer" "$T/last.err" || fail "wrong-type: field not named"
fresh
edit_json "$T/c/results/$S2/A1.json" 'j["measurement"]["samples_ns"][3] = -1.0' redigest
refused negative-sample "results/$S2/A1.json" result-format ""
grep -q "samples_ns" "$T/last.err" || fail "negative-sample: field not named"
# A sample dropped with the digest recomputed: the stopping rule's evidence still counts it.
fresh
edit_json "$T/c/results/$S2/A2.json" 'j["measurement"]["samples_ns"].pop()' redigest
refused dropped-sample "results/$S2/A2.json" samples measurement.stop.samples

# A planned result that is not a regular file (a symbolic link, a FIFO, a directory) is a malformed
# result: result-format, naming what is there; the FIFO is never opened (a read would block).
fresh
mv "$T/c/results/$S1/A1.json" "$T/c/A1.json" && ln -s ../../A1.json "$T/c/results/$S1/A1.json"
refused planned-symlink "results/$S1/A1.json" result-format ""
grep -qF "results/$S1/A1.json: result-format: expected a regular file, found a symbolic link" \
  "$T/last.err" || fail "planned-symlink: $(cat "$T/last.err")"
fresh
rm "$T/c/results/$S2/B.json" && mkfifo "$T/c/results/$S2/B.json"
for cmd in verify report resume; do
  expect_rc 3 timeout 120 "$ABH" $cmd "$T/c"
  grep -qF "results/$S2/B.json: result-format: expected a regular file, found a FIFO" \
    "$T/last.err" || fail "planned-fifo ($cmd): $(cat "$T/last.err")"
done
[ -p "$T/c/results/$S2/B.json" ] || fail "planned-fifo: the FIFO was replaced"
pass "planned-fifo -> result-format, without blocking, in verify, report and resume"
fresh
rm "$T/c/results/$S2/A2.json" && mkdir "$T/c/results/$S2/A2.json"
refused planned-directory "results/$S2/A2.json" result-format ""

# unplanned-file: an extra file, an extra directory, a symbolic link, a stray top-level file.
fresh
echo '{}' >"$T/c/results/$S1/A3.json"
refused extra-file "results/$S1/A3.json" unplanned-file ""
fresh
mkdir "$T/c/results/m1_n1_k1"
refused extra-dir "results/m1_n1_k1" unplanned-file ""
fresh
ln -s A1.json "$T/c/results/$S1/A3.json"
refused symlink "results/$S1/A3.json" unplanned-file ""
fresh
cp "$T/c/results/$S1/A1.json" "$T/c/results/notes.json"
refused stray-top-level "results/notes.json" unplanned-file ""

# A plan that lists the same arm twice (the only way two planned paths could hold one payload,
# the duplicate-result rule): the plan's own digest refuses the edit, and a forged digest does not
# get it past the plan's reader. (The duplicate-result rule itself is tested in the unit tests.)
fresh
python3 - "$T/c/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["tasks"].append(dict(p["tasks"][0]))
json.dump(p, open(sys.argv[1], "w"), indent=2)
PY
refused duplicate-task "plan.json" plan-digest payload_sha256
edit_json "$T/c/plan.json" "pass" redigest
for cmd in verify report; do
  expect_rc 3 "$ABH" "$cmd" "$T/c"
  grep -qF "is planned twice" "$T/last.err" || fail "duplicate-task (forged digest): $(cat "$T/last.err")"
done
pass "duplicate-task with a forged plan digest -> refused by the plan's reader"

# The same plan written out again (same content, other bytes): every result names the plan file
# it was measured under, so each is refused, and what to do is to restore the run's own plan.
fresh
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); json.dump(p, open(sys.argv[1], "w"), indent=4)' "$T/c/plan.json"
refused plan-rewritten "results/$S1/A1.json" plan-digest plan_sha256
grep -q "what to do: plan.json is not the plan this run's results were measured under" "$T/last.err" ||
  fail "plan-rewritten: no repair hint: $(cat "$T/last.err")"
! grep -q "move them out of the run directory" "$T/last.err" ||
  fail "plan-rewritten: told to measure every arm again: $(cat "$T/last.err")"

# An interrupted write (hidden temp file) is not a problem for verify, and resume removes it.
fresh
cp "$T/c/results/$S1/A1.json" "$T/c/results/$S1/.A1.json.tmp.99999"
expect_rc 0 "$ABH" verify "$T/c"
grep -qF "not counted: 1 interrupted write (hidden temp files): results/$S1/.A1.json.tmp.99999" \
  "$T/last.out" || fail "verify did not name the interrupted write: $(cat "$T/last.out")"
expect_rc 0 "$ABH" resume "$T/c" --quiet
[ ! -e "$T/c/results/$S1/.A1.json.tmp.99999" ] || fail "resume left the interrupted write"
pass "all tamper cases refused"
