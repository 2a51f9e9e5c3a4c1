# Sourced by tests/gpu/*.sh (not a test itself: only *.sh files become tests). Skips cleanly
# (exit 77) where no NVIDIA GPU is visible; otherwise drives the real worker through hand-written
# one-arm plans (make_plan.py) and reads its result files (result.py).
set -euo pipefail
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIP: no NVIDIA GPU here (nvidia-smi -L lists none)"
  exit 77
fi
: "${ABH_BIN:?set ABH_BIN to the build's bin directory}"
: "${ABH_PLUGIN_DIR:?set ABH_PLUGIN_DIR to the build's plugins directory}"
# Absolute, so that a test may change directory (tools/gpu_prove.sh passes a bundle's relative path).
ABH_BIN=$(cd "$ABH_BIN" && pwd) ABH_PLUGIN_DIR=$(cd "$ABH_PLUGIN_DIR" && pwd)
GPU_TEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORKER="$ABH_BIN/abharness-worker"
for f in "$WORKER" "$ABH_PLUGIN_DIR/libabh_spin.so" "$ABH_PLUGIN_DIR/libabh_cublaslt_gemm.so"; do
  [[ -e $f ]] || { echo "FAIL: $f missing: this machine has a GPU but the build has no CUDA parts"; exit 1; }
done
TMP=$(mktemp -d)
cleanup() {
  # ABH_GPU_OUT keeps every arm's plan, logs and result for the measurement notes.
  if [[ -n ${ABH_GPU_OUT:-} ]]; then
    mkdir -p "$ABH_GPU_OUT/$(basename "$0" .sh)" && cp -r "$TMP"/. "$ABH_GPU_OUT/$(basename "$0" .sh)/"
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
"$WORKER" probe --gpu 0 >"$TMP/env.json"

# arm NAME PLUGIN_FILE PARAMS_JSON [setting=value ...]: one worker process; exit code in NAME/rc.
arm() {
  local name=$1 plugin=$2 params=$3
  shift 3
  local d="$TMP/$name"
  mkdir -p "$d"
  [[ -e $d/plan.json ]] || python3 "$GPU_TEST_DIR/make_plan.py" "$d" "$ABH_PLUGIN_DIR/$plugin" "$TMP/env.json" "$params" "$@"
  local rc=0
  "$WORKER" run --run-dir "$d" --shape s --arm A1 >"$d/out.txt" 2>"$d/err.txt" || rc=$?
  echo "$rc" >"$d/rc"
}
rc_of() { cat "$TMP/$1/rc"; }
res() { python3 "$GPU_TEST_DIR/result.py" "$TMP/$1/results/s/A1.json" "$2"; }
fail() {
  echo "FAIL: $*"
  exit 1
}
expect_rc() {  # NAME RC
  local got
  got=$(rc_of "$1")
  if [[ $got != "$2" ]]; then
    echo "--- $1 stdout"; cat "$TMP/$1/out.txt"; echo "--- $1 stderr"; cat "$TMP/$1/err.txt"
    fail "$1: worker exit code $got, expected $2"
  fi
}
# ratio A B: prints A/B
ratio() { python3 -c 'import sys; print(float(sys.argv[1]) / float(sys.argv[2]))' "$1" "$2"; }
# check EXPR: a Python boolean expression over numbers already substituted in
check() { python3 -c "import sys; sys.exit(0 if ($1) else 1)"; }
# torch_python: sets PY to the user's interpreter for Python kernels (ABH_PYTHON, else
# /opt/torch/.venv/bin/python3, else python3), or skips the test when it lacks torch and triton.
torch_python() {
  PY=${ABH_PYTHON:-}
  if [[ -z $PY ]]; then
    PY=python3
    [[ -x /opt/torch/.venv/bin/python3 ]] && PY=/opt/torch/.venv/bin/python3
  fi
  if ! "$PY" -c "import torch, triton; assert torch.cuda.is_available()" 2>"$TMP/py.err"; then
    echo "SKIP: $PY cannot import torch and triton with CUDA: $(tail -1 "$TMP/py.err")"
    exit 77
  fi
}
