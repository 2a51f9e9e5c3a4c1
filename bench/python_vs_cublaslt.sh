#!/usr/bin/env bash
# A Python plugin next to the C++ one, on one GPU, in one call (docs/python.md):
#  1. an A/A sweep of a torch.matmul plugin (bench/torch_gemm.py, bf16, laid out as the cuBLASLt
#     plugin's GEMM) over the 16-shape reference grid, M in {1,8,32,128,512,1024,2048,4096} x
#     (N,K) in {(6656,19968),(19968,6656)}: per-shape drift and verdicts, the Python arms' start-up;
#  2. an A/A sweep of the cuBLASLt C++ plugin (kernels/cublaslt_gemm, target cuda of this
#     repository's abharness.json) over the same shapes;
#  3. a table, shape by shape, of the kernels each ran and their median kernel time: where both ran
#     the same cuBLAS kernel, the Python plugin's time must agree with the C++ plugin's.
# Everything is logged under $OUT (default /tmp/python-vs-cublaslt); a failure in one part does not
# stop the others; the short table comes last. Took 5.5 minutes on an H200 (docs/measurements.md
# §19: 48 C++ arms with one nvcc build in 70 s, 48 Python arms at ~4.4 s start-up each in 256 s;
# §24: 58 s and 60 s with workers started ahead).
#
# usage: OUT=/tmp/out BIN=.carry/bundle/bin PY=/opt/torch/.venv/bin/python3 bench/python_vs_cublaslt.sh
#        BENCH_FLAGS: flags for both `abharness run`s (default "--max-time 1": each arm stops
#        after at most 1 s measured, enough for a median kernel time)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
OUT=${OUT:-/tmp/python-vs-cublaslt}
PY=${PY:-python3}
[[ -z ${PY##*/*} ]] || PY=$(command -v "$PY")
read -r -a flags <<<"${BENCH_FLAGS:---max-time 1}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/bench.log") 2>&1
nvidia-smi -L >/dev/null 2>&1 || { echo "python_vs_cublaslt: no GPU here (nvidia-smi -L failed)"; exit 77; }
# A bundle (tools/relocatable.sh) keeps libgit2's own dependencies in bin/lib.
[[ -d $BIN/lib ]] && export LD_LIBRARY_PATH=$BIN/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
date -u +%Y-%m-%dT%H:%M:%SZ
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
"$PY" -c "import sys, torch; print('python', sys.version.split()[0], sys.executable, 'torch', torch.__version__, 'cuda', torch.version.cuda)"

# A throw-away repository: this repository's kernels and manifest, plus the torch plugin.
repo=$OUT/repo
rm -rf "$repo" "$OUT/runs"
mkdir -p "$repo"
cp -r "$root/include" "$root/kernels" "$repo/"
cp "$root/bench/torch_gemm.py" "$repo/torch_gemm.py"
python3 - "$root/abharness.json" >"$repo/abharness.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["plugins"]["torch"] = {"python": {"module": "torch_gemm", "device": "cuda"}}
print(json.dumps(m, indent=1))
PY
printf '__pycache__/\n' >"$repo/.gitignore"
git -C "$repo" init -q -b main
git -C "$repo" -c user.name=bench -c user.email=bench@abharness.invalid add -A
git -C "$repo" -c user.name=bench -c user.email=bench@abharness.invalid commit -q -m "kernels"
python3 - >"$OUT/grid.json" <<'PY'
import json
shapes = [{"id": f"m{m}_n{n}_k{k}_bf16", "params": {"m": m, "n": n, "k": k, "precision": "bf16"}}
          for n, k in [(6656, 19968), (19968, 6656)] for m in [1, 8, 32, 128, 512, 1024, 2048, 4096]]
print(json.dumps({"schema_version": 1, "shapes": shapes}, indent=1))
PY

# sweep NAME TARGET [flags]: one A/A sweep; its wall time in $OUT/NAME.wall.
sweep() {
  local name=$1 target=$2
  shift 2
  local t0 rc=0
  t0=$(date +%s.%N)
  "$BIN/abharness" run --repo "$repo" --baseline HEAD --candidate HEAD --target "$target" \
    --grid "$OUT/grid.json" --runs-root "$OUT/runs" --run-id "$name" --color never "${flags[@]}" \
    "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" || rc=$?
  python3 -c "print(round($(date +%s.%N) - $t0, 1))" >"$OUT/$name.wall"
  echo "== $name ($target): exit $rc, wall $(cat "$OUT/$name.wall") s"
  tail -25 "$OUT/$name.out"
  grep -E "FAILED|error" "$OUT/$name.err" | head -10
}
# The C++ sweep first: it is short, and a call that runs out of time still has it.
sweep cpp_aa cuda
sweep py_aa torch --python "$PY"
# One Python arm's log, for the record: its phases and the CUDA libraries it mapped.
cat "$OUT/runs/py_aa/logs/m4096_n19968_k6656_bf16/A1.out" 2>/dev/null

python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]

def load(name):
    run = f"{out}/runs/{name}"
    arms = {}
    for f in glob.glob(f"{run}/results/*/*.json"):
        r = json.load(open(f))
        arms[(r["invocation"]["shape"], r["invocation"]["arm"])] = r
    try:
        rep = {s["shape"]: s for s in json.load(open(f"{run}/report.json"))["shapes"]}
    except (OSError, ValueError, KeyError):
        rep = {}
    wall = open(f"{out}/{name}.wall").read().strip() if os.path.exists(f"{out}/{name}.wall") else "?"
    return arms, rep, wall

py, py_rep, py_wall = load("py_aa")
cpp, cpp_rep, cpp_wall = load("cpp_aa")
shapes = [s["id"] for s in json.load(open(f"{out}/grid.json"))["shapes"]]

def pooled(arms, shape):
    """Median kernel time (us) and median SM clock (MHz) over the shape's arms, and A1's kernels."""
    rs = [arms[(shape, a)] for a in ("A1", "B", "A2") if (shape, a) in arms]
    if not rs:
        return None, None, "(no result)"
    ns = [x for r in rs for x in r["measurement"]["samples_ns"]]
    mhz = [x for r in rs for x in r["measurement"]["clock"]["sample_mhz"]]
    names = rs[0]["measurement"]["kernel_names"]
    return statistics.median(ns) / 1e3, statistics.median(mhz) if mhz else None, names

def short(names):
    n = "+".join(names)
    return n if len(n) <= 46 else n[:20] + "..." + n[-23:]

def drift(rep, shape):
    s = rep.get(shape)
    if not s:
        return "   n/a", "n/a"
    d = s.get("drift")
    return (f"{(d - 1) * 100:+5.2f}%" if d else "   n/a"), s.get("verdict", "?")

lines, same, ratios = [], 0, []
hdr = (f"{'shape':24} {'py drift':>8} {'py verdict':10} {'C++ drift':>9} {'C++ verdict':11} "
       f"{'py us':>9} {'C++ us':>9} {'py/C++':>7} {'cyc ratio':>9} kernel")
for shape in shapes:
    p_us, p_mhz, p_names = pooled(py, shape)
    c_us, c_mhz, c_names = pooled(cpp, shape)
    pd, pv = drift(py_rep, shape)
    cd, cv = drift(cpp_rep, shape)
    match = p_us is not None and c_us is not None and p_names == c_names
    ratio = p_us / c_us if p_us and c_us else float("nan")
    # Kernel time x SM clock: the ratio at one clock, for compute-bound kernels (the two sweeps ran
    # minutes apart, at the power cap's clocks of their moment).
    cyc = ratio * p_mhz / c_mhz if p_mhz and c_mhz else float("nan")
    if match:
        same += 1
        ratios.append((ratio, cyc))
    kern = ("same: " + short(p_names)) if match else f"py {short(p_names)} | C++ {short(c_names)}"
    lines.append(f"{shape:24} {pd:>8} {pv:10} {cd:>9} {cv:11} "
                 f"{p_us if p_us else float('nan'):9.1f} {c_us if c_us else float('nan'):9.1f} "
                 f"{ratio:7.4f} {cyc:9.4f} {kern}")

ready = [r["measurement"]["ready_s"] for r in py.values()]
cready = [r["measurement"]["ready_s"] for r in cpp.values()]
print()
print("================ Python (torch.matmul) vs C++ (cuBLASLt), bf16, A/A each ================")
print(hdr)
print("\n".join(lines))
if ratios:
    rs = [r for r, _ in ratios]
    cs = [c for _, c in ratios if c == c]
    print(f"same kernel on {same} of {len(shapes)} shapes: py/C++ kernel time median "
          f"{statistics.median(rs):.4f} (range {min(rs):.4f}..{max(rs):.4f}); at one clock "
          f"median {statistics.median(cs):.4f}" if cs else "")
else:
    print("no shape ran the same kernel in both")
for name, rep, wall, arms in (("py_aa", py_rep, py_wall, py), ("cpp_aa", cpp_rep, cpp_wall, cpp)):
    v = {}
    for s in rep.values():
        v[s.get("verdict")] = v.get(s.get("verdict"), 0) + 1
    worst = max((abs(s["drift"] - 1) for s in rep.values() if s.get("drift")), default=float("nan"))
    print(f"{name}: {len(arms)} of 48 arms, sweep wall {wall} s, worst |drift| {worst * 100:.2f}%, "
          f"verdicts {v}")
if ready:
    print(f"Python arm ready (process start to first timed sample): median "
          f"{statistics.median(ready):.2f} s, max {max(ready):.2f} s over {len(ready)} arms; "
          f"C++ arms median {statistics.median(cready) if cready else float('nan'):.2f} s")
PY
echo "logs: $OUT (bench.log, py_aa.*, cpp_aa.*, runs/)"
