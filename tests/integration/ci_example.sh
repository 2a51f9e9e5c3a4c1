# examples/ci/abharness-pr.yml (measures) and abharness-pr-comment.yml (comments) cannot run
# here (they need GitHub and a GPU runner), so what can be checked is checked:
#   - both are valid workflows (SchemaStore's schema, as action-validator checks them) and parse
#     as YAML with the structure GitHub Actions expects; every abharness command they
#     run exists with every flag they pass (against `abharness <cmd> --help`); `gh` is used only
#     through `api`;
#   - the safety rules: the measuring workflow has a read-only token and measures only PRs from
#     branches of the repository; its runs root is outside the checkout; it compares the merge
#     commit with its first parent; the comment comes from a workflow_run workflow that holds the
#     write permission and edits only its own comment (by author and marker);
#   - a dry run of their shell steps against a real CPU run: the measure and summary steps in a
#     checkout whose HEAD is a merge commit (with the test's short-arm flags added to `run`), then
#     the comment step with a `gh` that records its calls, for a new and an existing comment.
source "$ABH_TESTLIB"
wf=$ABH_SOURCE_DIR/examples/ci/abharness-pr.yml
cwf=$ABH_SOURCE_DIR/examples/ci/abharness-pr-comment.yml
python3 - "$wf" "$cwf" "$ABH" <<'PY'
import re, shlex, subprocess, sys
import yaml

path, cpath, abh = sys.argv[1:4]
doc, cdoc = yaml.safe_load(open(path)), yaml.safe_load(open(cpath))
# PyYAML reads the key `on` as the boolean True (YAML 1.1).
on = doc.get("on", doc.get(True))
con = cdoc.get("on", cdoc.get(True))
if not isinstance(on, dict) or "pull_request" not in on:
    sys.exit("FAIL: the workflow does not run on pull_request")
if any(v == "write" for v in doc.get("permissions", {}).values()):
    sys.exit("FAIL: the measuring workflow asks for a write permission")
job = doc["jobs"]["measure"]
if "github.event.pull_request.head.repo.full_name == github.repository" not in job.get("if", ""):
    sys.exit("FAIL: the measuring job has no guard against pull requests from forks")
if "runner.temp" not in job["env"]["RUNS_ROOT"]:
    sys.exit("FAIL: the runs root is not outside the checkout")
text = open(path).read()
if "--baseline HEAD^1 --candidate HEAD" not in text or '--runs-root "$RUNS_ROOT"' not in text:
    sys.exit("FAIL: the merge commit is not measured against its first parent in RUNS_ROOT")
if "GITHUB_STEP_SUMMARY" not in text:
    sys.exit("FAIL: no job summary")
if not isinstance(con, dict) or con.get("workflow_run", {}).get("workflows") != [doc["name"]]:
    sys.exit("FAIL: the comment workflow does not follow the measuring one by workflow_run")
if cdoc.get("permissions", {}).get("pull-requests") != "write":
    sys.exit("FAIL: the comment workflow cannot write the comment")
ctext = open(cpath).read()
if 'select(.user.login == "github-actions[bot]")' not in ctext or "actions/checkout" in ctext:
    sys.exit("FAIL: the comment workflow must find its comment by author and never check out")
steps = [s for d in (doc, cdoc) for job in d["jobs"].values() for s in job["steps"]]
scripts = [s["run"] for s in steps if "run" in s]
uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
for want in ("actions/checkout", "actions/upload-artifact", "actions/download-artifact"):
    if want not in uses:
        sys.exit(f"FAIL: the workflows do not use {want}")

help_cache = {}
def help_of(sub):
    if sub not in help_cache:
        p = subprocess.run([abh, sub, "--help"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"FAIL: the workflow runs `abharness {sub}`, which does not exist: {p.stderr}")
        help_cache[sub] = p.stdout
    return help_cache[sub]

checked = 0
gh_uses = set()
for script in scripts:
    text = script.replace("\\\n", " ")
    # GitHub expressions are substituted before the shell sees the script.
    text = re.sub(r"\$\{\{[^}]*\}\}", "X", text)
    pending = ""
    for line in text.splitlines():
        line = (pending + "\n" + line).strip() if pending else line.strip()
        if not line or line.startswith("#"):
            continue
        try:  # a quoted argument may go on over several lines (gh's --jq filter)
            words = shlex.split(line, comments=True)
            pending = ""
        except ValueError:
            pending = line
            continue
        for i, w in enumerate(words):
            if w == "abharness":
                sub = words[i + 1]
                h = help_of(sub)
                for flag in words[i + 2:]:
                    if flag in ("||", "|", "&&", ";"):
                        break
                    if flag.startswith("-"):
                        name = flag.split("=")[0]
                        if not re.search(r"(^|[\s,])" + re.escape(name) + r"\b", h):
                            sys.exit(f"FAIL: `abharness {sub}` has no flag {name}")
                        checked += 1
            if w == "gh" or w.endswith("(gh") or w == "$(gh":
                gh_uses.add(" ".join(words[i + 1:i + 3]) if words[i + 1] == "pr" else words[i + 1])
if not help_cache:
    sys.exit("FAIL: the workflow runs no abharness command")
if gh_uses != {"api"}:
    sys.exit(f"FAIL: gh is used as {sorted(gh_uses)}; expected api only")
if "<!-- abharness:pr -->" not in ctext:
    sys.exit("FAIL: the comment workflow does not look for the pr rendering's marker")
print(f"abharness commands {sorted(help_cache)}: {checked} flags exist; gh: {sorted(gh_uses)}")
PY
# Both workflows are valid GitHub Actions workflows: SchemaStore's workflow schema, the one
# action-validator checks against (tests/data/README.md), offline. A workflow with a misspelt key
# shows that the check can fail.
python3 - "$ABH_SOURCE_DIR/tests/data/github-workflow.schema.json" "$wf" "$cwf" <<'PY'
import json, sys
import jsonschema, yaml

validator = jsonschema.Draft7Validator(json.load(open(sys.argv[1])))
def errors(doc):
    if True in doc:  # PyYAML reads the key `on` as True (YAML 1.1); GitHub reads YAML 1.2
        doc["on"] = doc.pop(True)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in validator.iter_errors(doc)]
for path in sys.argv[2:]:
    found = errors(yaml.safe_load(open(path)))
    if found:
        sys.exit(f"FAIL: {path} is not a valid workflow: " + "; ".join(found))
broken = yaml.safe_load(open(sys.argv[2]))
job = broken["jobs"]["measure"]
job["stepz"] = job.pop("steps")
if not errors(broken):
    sys.exit("FAIL: the workflow schema accepted a job with `stepz` for `steps`")
print(f"{len(sys.argv) - 2} workflows valid against the workflow schema")
PY
# The dry run. The checkout: the base branch moved on after the PR branched (a notes commit),
# and HEAD is the merge of the PR (the blocked kernel) onto it, as refs/pull/<n>/merge is.
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
git_q -C repo branch pr HEAD
git_q -C repo reset -q --hard HEAD~1
echo "base moved on" >repo/NOTES && git_q -C repo add NOTES && git_q -C repo commit -q -m notes
git_q -C repo merge -q --no-ff pr -m "Merge pull request #7"
small_grid
steps_of() {  # steps_of WORKFLOW JOB: each `run` script of the job, NUL-separated
  python3 - "$1" "$2" <<'PY'
import sys, yaml
for s in yaml.safe_load(open(sys.argv[1]))["jobs"][sys.argv[2]]["steps"]:
    if "run" in s:
        sys.stdout.write(s["run"] + "\0")
PY
}
mapfile -d '' measure < <(steps_of "$wf" measure)
[ ${#measure[@]} = 4 ] || fail "expected 4 run steps in the measuring job, found ${#measure[@]}"
mkdir -p runner-temp fakebin
export ABH_GRID=$PWD/grid.json ABH_TARGET=cpu RUN_ID=pr7-1-1 PR_NUMBER=7 \
  RUNS_ROOT=$PWD/runner-temp/abharness-runs PR_DIR=$PWD/runner-temp/abharness-pr \
  GITHUB_OUTPUT=$PWD/gh-output GITHUB_STEP_SUMMARY=$PWD/gh-summary GITHUB_REPOSITORY=o/r
printf '#!/bin/sh\nexec %q "$@"\n' "$ABH" >fakebin/abharness && chmod +x fakebin/abharness
# Steps 2 (measure) and 3 (summary), as Actions runs them (bash -e -o pipefail) in the checkout.
step2=${measure[1]//--color never/--color never ${FAST[*]}}
(cd repo && PATH=$T/fakebin:$PATH bash --noprofile --norc -eo pipefail -c "$step2") >measure.log 2>&1 ||
  { cat measure.log >&2; fail "the measure step failed"; }
grep -Eq '^exit_code=[0-9]+$' gh-output || fail "the measure step set no exit_code: $(cat gh-output)"
R=$RUNS_ROOT/$RUN_ID
[ -f "$R/plan.json" ] || fail "no run under RUNS_ROOT"
[ "$(jget "$R/plan.json" 'j["variants"][0]["source"]["commit"]')" = "$(git -C repo rev-parse HEAD^1)" ] ||
  fail "the baseline is not the merge commit's first parent"
[ "$(jget "$R/plan.json" 'j["variants"][1]["source"]["commit"]')" = "$(git -C repo rev-parse HEAD)" ] ||
  fail "the candidate is not the merge commit"
[ -z "$(git -C repo status --porcelain)" ] || fail "the run left files in the checkout"
(cd repo && PATH=$T/fakebin:$PATH bash --noprofile --norc -eo pipefail -c "${measure[2]}") >summary.log 2>&1 ||
  { cat summary.log >&2; fail "the summary step failed"; }
head -1 gh-summary | grep -qx '<!-- abharness:pr -->' || fail "the job summary is not the pr rendering"
[ "$(cat "$PR_DIR/pr-number")" = 7 ] && cmp -s "$PR_DIR/report.pr.md" "$R/report.pr.md" ||
  fail "the comment artifact lacks the PR number or the report"
# The comment step, on the artifact as download-artifact lays it out, with a recording gh: first
# with no comment of ours (a POST), then with one (a PATCH of it), then with a forged PR number.
mapfile -d '' comment < <(steps_of "$cwf" comment)
cat >fakebin/gh <<'SH'
#!/bin/sh
echo "$*" >>"$GH_LOG"
case "$*" in *--paginate*) [ -n "$GH_EXISTING" ] && echo "$GH_EXISTING" ;; esac
exit 0
SH
chmod +x fakebin/gh
mkdir -p cw && cp -r "$PR_DIR" cw/abharness-pr
comment_step() {
  (cd cw && PATH=$T/fakebin:$PATH GH_LOG=$T/gh.log bash --noprofile --norc -eo pipefail -c "${comment[0]}")
}
GH_EXISTING= comment_step >comment.log 2>&1 || { cat comment.log >&2; fail "the comment step failed"; }
grep -q "^api --method POST repos/o/r/issues/7/comments -F body=@abharness-pr/report.pr.md$" gh.log ||
  fail "no new comment was posted: $(cat gh.log)"
grep -q 'select(.user.login == "github-actions\[bot\]")' gh.log || fail "comments not chosen by author"
: >gh.log
GH_EXISTING=123 comment_step >comment.log 2>&1 || { cat comment.log >&2; fail "the comment step failed"; }
grep -q "^api --method PATCH repos/o/r/issues/comments/123 -F body=@abharness-pr/report.pr.md$" gh.log ||
  fail "the existing comment was not updated: $(cat gh.log)"
echo '7; rm -rf /' >cw/abharness-pr/pr-number
: >gh.log
comment_step >comment.log 2>&1 && fail "a PR number that is not a number was used"
[ ! -s gh.log ] || fail "gh was called with a forged PR number: $(cat gh.log)"
pass "the CI example is safe, uses only commands and flags that exist, and its steps run"
