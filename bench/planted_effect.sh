#!/usr/bin/env bash
# Sensitivity on the GPU: a planted slow-down of known size must be called `slower` on every shape
# at a narrow noise band, and the same grid A/A must stay `same`.
#
# The kernel is the test plugin kernels/spin (thread 0 of each block spins on the GPU's %globaltimer
# for `duration_us`). The candidate revision changes one line: it spins (1000 + PERMILLE)/1000 times
# as long. The effect is therefore known by construction, in nanoseconds of GPU time, whatever the
# clocks do: speedup = 1000 / (1000 + PERMILLE) (0.9901 for the default 10 per mille). Sixteen
# durations from 20 us to 2 ms span the kernel times of the 16-shape GEMM grid; 132 blocks keep
# every SM of an H100/H200 busy, as a GEMM would.
#
# Two sweeps, both at --noise-band $BAND (default 0.005) with --fail-on-regression:
#   planted  baseline HEAD~1 vs candidate HEAD (the +PERMILLE spin): expect exit 5, all `slower`
#   control  HEAD~1 vs HEAD~1: expect exit 0, all `same`
# Prints per shape: duration, speedup with its interval, drift and verdict, then the counts.
#
# usage: BIN=<dir with abharness> [PERMILLE=10] [BAND=0.005] [WORK=dir] bench/planted_effect.sh
#        extra flags for both `abharness run`s go in ABH_FLAGS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
PERMILLE=${PERMILLE:-10}
BAND=${BAND:-0.005}
nvidia-smi -L >/dev/null 2>&1 || { echo "planted_effect: no GPU here (nvidia-smi -L failed)" >&2; exit 77; }
work=${WORK:-$(mktemp -d /tmp/abh-planted.XXXXXX)}
mkdir -p "$work"
[[ -d $BIN/../lib ]] && export LD_LIBRARY_PATH=$BIN/../lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

commit() {
  git -C "$repo" -c user.name=bench -c user.email=bench@abharness.invalid commit -q -am "$1"
}

# The repository: the spin plugin and a manifest that builds it, then the one-line change.
repo=$work/repo
rm -rf "$repo" "$work/runs"
mkdir -p "$repo"
cp -r "$root/include" "$root/kernels" "$repo/"
cat >"$repo/abharness.json" <<'JSON'
{ "schema_version": 1,
  "plugins": { "spin": {
    "argv": ["${CUDA_HOME}/bin/nvcc", "-O3", "-std=c++20", "-arch=sm_90", "-shared", "-Xcompiler",
             "-fPIC", "-I${ABHARNESS_INCLUDE}", "kernels/spin/spin.cu", "-o", "libabh_spin.so"],
    "artifact": "libabh_spin.so", "timeout_s": 600 } } }
JSON
git -C "$repo" init -q -b main
git -C "$repo" add -A
commit "spin: baseline"
python3 - "$repo/kernels/spin/spin.cu" "$PERMILLE" <<'PY'
import sys
path, permille = sys.argv[1], int(sys.argv[2])
src = open(path).read()
old = "__global__ void spin_kernel(unsigned long long ns, unsigned long long* out) {\n  spin_for(ns, out);"
new = old.replace("spin_for(ns, out)", f"spin_for(ns + ns * {permille} / 1000, out)")
if src.count(old) != 1:
    sys.exit("planted_effect: the spin kernel's body changed; update the planted edit")
open(path, "w").write(src.replace(old, new))
PY
commit "spin: +$PERMILLE per mille (planted)"

python3 - >"$work/grid.json" <<'PY'
import json
shapes = []
for i in range(16):
    us = round(20 * 100 ** (i / 15), 1)
    shapes.append({"id": f"spin_{us:g}us", "params": {"mode": "spin", "duration_us": us, "blocks": 132}})
print(json.dumps({"schema_version": 1, "shapes": shapes}, indent=1))
PY

sweep() {  # sweep NAME BASELINE CANDIDATE
  local rc=0 t0
  t0=$(date +%s)
  # shellcheck disable=SC2086
  "$BIN/abharness" run --repo "$repo" --baseline "$2" --candidate "$3" --target spin \
    --grid "$work/grid.json" --runs-root "$work/runs" --run-id "$1" --noise-band "$BAND" \
    --fail-on-regression --color never ${ABH_FLAGS:-} >"$work/$1.out" 2>"$work/$1.err" || rc=$?
  echo "== $1 ($2 vs $3): exit $rc, $(($(date +%s) - t0)) s"
  tail -5 "$work/$1.err"
}
sweep planted HEAD~1 HEAD
sweep control HEAD~1 HEAD~1

python3 - "$work/runs" "$PERMILLE" "$BAND" <<'PY'
import json, sys
runs, permille, band = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
expect = 1000 / (1000 + permille)
for name in ("planted", "control"):
    try:
        rep = json.load(open(f"{runs}/{name}/report.json"))
    except OSError as e:
        print(f"{name}: no report ({e})")
        continue
    print(f"\n{name}: speedup expected {expect if name == 'planted' else 1.0:.4f}, band {band}")
    counts = {}
    for s in rep["shapes"]:
        ci, d = s.get("ci") or {}, s.get("drift")
        counts[s["verdict"]] = counts.get(s["verdict"], 0) + 1
        print(f"  {s['shape']:14} {s.get('speedup') or float('nan'):7.4f} "
              f"[{ci.get('lo', float('nan')):.4f}, {ci.get('hi', float('nan')):.4f}] "
              f"drift {((d or 1) - 1) * 100:+6.2f}%  {s['verdict']}")
    g = rep["summary"]
    print(f"  verdicts {counts}; geomean {g['geomean']:.4f} "
          f"[{g['geomean_ci']['lo']:.4f}, {g['geomean_ci']['hi']:.4f}]")
PY
echo "work directory: $work"
