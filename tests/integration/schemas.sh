# The run-directory schemas hold for what abharness really writes: a real run on the CPU example,
# then plan.json against schemas/plan.schema.json and every results/<shape>/<arm>.json against
# schemas/result.schema.json (JSON Schema 2020-12). And they are not vacuous: a result missing a
# required field, a result whose samples_ns holds a string and a plan with an unknown top-level
# key must each be refused, for that reason.
source "$ABH_TESTLIB"
PY=$(schema_python)
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cat > grid.json <<'JSON'
{ "schema_version": 1, "shapes": [
  { "id": "m32_n32_k32", "label": "tiny square", "params": { "m": 32, "n": 32, "k": 32 } },
  { "id": "m96_n64_k80", "params": { "m": 96, "n": 64, "k": 80 } } ] }
JSON
expect_rc 0 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id s "${FAST[@]}" --quiet
"$PY" - runs/s "$ABH_SOURCE_DIR/schemas" <<'PY'
import copy, glob, json, sys
from jsonschema import Draft202012Validator

run, schemas = sys.argv[1:3]

def validator(name):
    schema = json.load(open(f"{schemas}/{name}.schema.json"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)

plan_v, result_v = validator("plan"), validator("result")

def errors(v, doc):
    return sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))

def must_hold(v, path):
    errs = errors(v, json.load(open(path)))
    for e in errs:
        print(f"{path}: at /{'/'.join(map(str, e.absolute_path))}: {e.message}", file=sys.stderr)
    if errs:
        sys.exit(f"FAIL: {path} does not match its schema")

def must_refuse(v, doc, what, where):
    # Refused, and for the reason planted: an error at or above the broken spot.
    errs = errors(v, doc)
    if not any(list(e.absolute_path) == where[: len(e.absolute_path)] for e in errs):
        sys.exit(f"FAIL: the schema accepts {what}" +
                 (f" (errors elsewhere only: {[e.message for e in errs]})" if errs else ""))

plan = json.load(open(run + "/plan.json"))
must_hold(plan_v, run + "/plan.json")
results = sorted(glob.glob(run + "/results/*/*.json"))
if len(results) != len(plan["tasks"]) or not results:
    sys.exit(f"FAIL: {len(results)} result files for {len(plan['tasks'])} planned arms")
for path in results:
    must_hold(result_v, path)

one = json.load(open(results[0]))
missing = copy.deepcopy(one)
del missing["measurement"]["timer"]
must_refuse(result_v, missing, "a result without measurement.timer", ["measurement"])
stringy = copy.deepcopy(one)
stringy["measurement"]["samples_ns"][0] = str(stringy["measurement"]["samples_ns"][0])
must_refuse(result_v, stringy, "a string in samples_ns", ["measurement", "samples_ns", 0])
unknown = copy.deepcopy(plan)
unknown["unexpected"] = True
must_refuse(plan_v, unknown, "a plan with an unknown top-level key", [])
print(f"plan + {len(results)} results valid; 3 broken documents refused")
PY
pass "plan and result schemas"
