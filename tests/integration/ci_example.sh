# examples/ci/abharness-pr.yml cannot run here (it needs GitHub and a GPU runner), so what can be
# checked is checked: it parses as YAML with the structure GitHub Actions expects, and every
# abharness command it runs exists with every flag it passes (against `abharness <cmd> --help`);
# the other programs it names are standard ones or `gh`, used only with its `api` and `pr comment`
# subcommands; and the marker it looks for is the one the pr rendering starts with.
source "$ABH_TESTLIB"
wf=$ABH_SOURCE_DIR/examples/ci/abharness-pr.yml
python3 - "$wf" "$ABH" <<'PY'
import re, shlex, subprocess, sys
import yaml

path, abh = sys.argv[1:3]
doc = yaml.safe_load(open(path))
# PyYAML reads the key `on` as the boolean True (YAML 1.1).
on = doc.get("on", doc.get(True))
if not isinstance(on, dict) or "pull_request" not in on:
    sys.exit("FAIL: the workflow does not run on pull_request")
steps = [s for job in doc["jobs"].values() for s in job["steps"]]
scripts = [s["run"] for s in steps if "run" in s]
uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
for want in ("actions/checkout", "actions/upload-artifact"):
    if want not in uses:
        sys.exit(f"FAIL: the workflow does not use {want}")

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
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line, comments=True)
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
if not gh_uses or not gh_uses <= {"api", "pr comment"}:
    sys.exit(f"FAIL: gh is used as {sorted(gh_uses)}; expected api and pr comment")
if "<!-- abharness:pr -->" not in open(path).read():
    sys.exit("FAIL: the workflow does not look for the pr rendering's marker")
print(f"abharness commands {sorted(help_cache)}: {checked} flags exist; gh: {sorted(gh_uses)}")
PY
# The marker the workflow searches for is what the pr rendering really starts with.
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
small_grid
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id ci "${FAST[@]}" --quiet
head -1 runs/ci/report.pr.md | grep -qx '<!-- abharness:pr -->' || fail "report.pr.md does not start with the marker"
pass "the CI example parses and names only commands and flags that exist"
