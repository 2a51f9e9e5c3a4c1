# tools/relocatable.sh makes a bundle that holds what an installed tree holds; moved to another
# directory (as when carried to another machine) and run with no ABH_DATA_DIR and no
# ABHARNESS_INCLUDE_DIR, its abharness finds its GPU table (roofline answers for an H200, where a
# missing table would say "speed of light not available"), its plugin headers (a recipe's
# ${ABHARNESS_INCLUDE} is the bundle's include/) and its worker, and runs a real sweep.
source "$ABH_TESTLIB"
build=$(dirname "$ABH_BIN")
bash "$ABH_SOURCE_DIR/tools/relocatable.sh" "$build" made >bundle.log 2>&1 || { cat bundle.log >&2; fail "relocatable.sh"; }
for f in bin/abharness bin/abharness-worker include/abharness/plugin.h lib/abharness/libabh_cpu_gemm.so \
         share/abharness/data/gpus.json share/abharness/schemas/grid.schema.json; do
  [ -e "made/$f" ] || fail "the bundle lacks $f"
done
mkdir elsewhere && mv made elsewhere/bundle
B=$T/elsewhere/bundle
unset ABH_DATA_DIR ABHARNESS_INCLUDE_DIR
small_grid
"$B/bin/abharness" roofline --gpu "NVIDIA H200" --grid grid.json --precision bf16 >roof.txt 2>&1 \
  || { cat roof.txt >&2; fail "the moved bundle's roofline"; }
grep -qi "not available" roof.txt && fail "the moved bundle has no speed of light: $(cat roof.txt)"
grep -q "^m96_n64_k80 .* launch" roof.txt || fail "roofline printed no shape: $(cat roof.txt)"

bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
"$B/bin/abharness" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id moved "${FAST[@]}" --quiet >run.out 2>run.err \
  || { cat run.out run.err >&2; fail "the moved bundle's run"; }
grep -q -- "-I$B/include" runs/moved/plan.json || fail "\${ABHARNESS_INCLUDE} is not the bundle's include/"
python3 - runs/moved/plan.json "$B" <<'PY' || fail "the moved bundle ran a worker from outside itself"
import json, sys
plan, bundle = json.load(open(sys.argv[1])), sys.argv[2]
# The plan records the digest of the worker's files (core/model/worker_protocol.cpp): it must be
# that of the bundle's executable, engine and Python front end (its script, and every module of
# the package beside it, the generated protocol module among them).
import hashlib, os
def field(h, s):
    b = s.encode()
    h.update(str(len(b)).encode() + b":" + b)
def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()
h = hashlib.sha256()
field(h, "abharness-worker-files-v2")
for role, path in [("executable", "bin/abharness-worker"), ("engine", "lib/libabharness_worker.so"),
                   ("front end", "bin/python/abharness_front_end.py")]:
    field(h, role)
    field(h, digest(bundle + "/" + path))
package = bundle + "/bin/python/abharness"
modules = sorted(os.path.relpath(os.path.join(d, f), package)
                 for d, _, files in os.walk(package) for f in files if f.endswith(".py"))
assert "_front_end/protocol.py" in modules, modules
for rel in modules:
    for part in ("python package", rel, digest(package + "/" + rel)):
        field(h, part)
sys.exit(0 if plan["worker_sha256"] == h.hexdigest() else 1)
PY
pass "a moved bundle finds its GPU table, headers and worker without environment variables"

# A Python plugin from the moved bundle: its Python front end (the script, the package beside it
# and the protocol module generated at build time) finds the engine in the bundle's lib/.
SYS_PY=$(python_with numpy python3-numpy)
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" numpy pyrepo >/dev/null
"$B/bin/abharness" run --repo pyrepo --baseline HEAD~1 --candidate HEAD --target numpy \
  --python "$SYS_PY" --grid grid.json --runs-root runs --run-id py "${FAST[@]}" --quiet \
  >py.out 2>py.err || { cat py.out py.err >&2; fail "a Python plugin from the moved bundle"; }
"$B/bin/abharness" verify runs/py >/dev/null 2>&1 || fail "verify of the bundle's Python run"
grep -q "engine loaded" runs/py/logs/*/A1.out || fail "no Python front end in the arm's log"
pass "a Python plugin runs from the moved bundle, its front end finding the bundle's engine"
