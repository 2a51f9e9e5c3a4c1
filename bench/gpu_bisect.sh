#!/usr/bin/env bash
# `abharness bisect` on the GPU: a planted K-padding commit buried in eight commits of the cuBLASLt
# GEMM plugin must be named as the first bad commit of every shape it moves.
#
# The repository holds the built-in kernels and manifest. After the good commit come eight: seven
# harmless ones (a comment in a different source file each, so every commit builds a plugin of its
# own, as real history does) and, at position PLANT_AT (default 5), the planted one: for the bf16
# TN layout it stores A and B with K padded to a multiple of 1024 (the padding zeroed) and runs the
# matmul over the padded K. The output is unchanged (verification passes) and the work grows by
# the padding: 19968 -> 20480 (+2.6 %), 6656 -> 7168 (+7.7 %) on the reference grid.
#
# Prints the wall time, the probes used (and the builds), and per shape the first bad commit found
# against the planted one, with the culprit's interval; then `verify`s the bisect directory.
#
# usage: BIN=<dir with abharness> [PLANT_AT=5] [WORK=dir] bench/gpu_bisect.sh
#        SHAPES_M="1 128 4096" narrows the grid's M values; extra flags for `bisect` in ABH_FLAGS
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/bin}
PLANT_AT=${PLANT_AT:-5}
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu_bisect: no GPU here (nvidia-smi -L failed)" >&2; exit 77; }
work=${WORK:-$(mktemp -d /tmp/abh-gpu-bisect.XXXXXX)}
mkdir -p "$work"
[[ -d $BIN/../lib ]] && export LD_LIBRARY_PATH=$BIN/../lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

repo=$work/repo
rm -rf "$repo" "$work/runs"
mkdir -p "$repo"
cp -r "$root/include" "$root/kernels" "$root/abharness.json" "$repo/"
commit() {
  git -C "$repo" -c user.name=bench -c user.email=bench@abharness.invalid commit -q -am "$1"
}
git -C "$repo" init -q -b main
git -C "$repo" add -A
commit "c0 good"

# The planted change, applied to the sources as a patch would be; it refuses to guess when the
# code it edits has changed.
plant() {
  python3 - "$repo/kernels/cublaslt_gemm" <<'PY'
import sys
d = sys.argv[1]
def edit(name, old, new, count=1):
    path = f"{d}/{name}"
    src = open(path).read()
    if src.count(old) != count:
        sys.exit(f"gpu_bisect: {name} changed ({old!r} found {src.count(old)} times); update the plant")
    open(path, "w").write(src.replace(old, new))
edit("problem.hpp", "namespace cublaslt_gemm {\n\n// Phase 1",
     "namespace cublaslt_gemm {\n\n// K padded to a multiple of 1024 for the bf16 TN layout (zeros beyond K).\n"
     "inline long long padded_k(const abh_problem& p) {\n"
     "  return p.precision == \"bf16\" && p.a_k_major && p.b_k_major ? (p.k + 1023) / 1024 * 1024 : p.k;\n"
     "}\n\n// Phase 1")
edit("inputs.cpp",
     "  p.sta = p.a_k_major ? OperandStride{p.k, 1} : OperandStride{1, p.m};\n"
     "  p.stb = p.b_k_major ? OperandStride{p.k, 1} : OperandStride{1, p.n};\n"
     "  p.a = dev_alloc(std::size_t(p.m * p.k) * elem_bytes(p.ea), \"A\");\n"
     "  p.b = dev_alloc(std::size_t(p.n * p.k) * elem_bytes(p.eb), \"B\");\n",
     "  const long long kp = padded_k(p);\n"
     "  p.sta = p.a_k_major ? OperandStride{kp, 1} : OperandStride{1, p.m};\n"
     "  p.stb = p.b_k_major ? OperandStride{kp, 1} : OperandStride{1, p.n};\n"
     "  p.a = dev_alloc(std::size_t(p.m * kp) * elem_bytes(p.ea), \"A\");\n"
     "  p.b = dev_alloc(std::size_t(p.n * kp) * elem_bytes(p.eb), \"B\");\n")
edit("inputs.cpp",
     "  cuda_ok(fill(p.a.get(), p.ea, p.m * p.k, p.seed, 1, p.spread, nullptr), \"fill A\");\n"
     "  cuda_ok(fill(p.b.get(), p.eb, p.n * p.k, p.seed, 2, p.spread, nullptr), \"fill B\");\n",
     "  cuda_ok(fill(p.a.get(), p.ea, p.m * kp, p.seed, 1, p.spread, nullptr), \"fill A\");\n"
     "  cuda_ok(fill(p.b.get(), p.eb, p.n * kp, p.seed, 2, p.spread, nullptr), \"fill B\");\n"
     "  if (kp != p.k) {\n"
     "    const std::size_t e = elem_bytes(p.ea), pitch = std::size_t(kp) * e;\n"
     "    auto* a = static_cast<char*>(p.a.get()) + std::size_t(p.k) * e;\n"
     "    auto* b = static_cast<char*>(p.b.get()) + std::size_t(p.k) * e;\n"
     "    cuda_ok(cudaMemset2D(a, pitch, 0, std::size_t(kp - p.k) * e, std::size_t(p.m)), \"pad A\");\n"
     "    cuda_ok(cudaMemset2D(b, pitch, 0, std::size_t(kp - p.k) * e, std::size_t(p.n)), \"pad B\");\n"
     "  }\n")
edit("buffer_sets.cpp", "std::size_t(p.m * p.k) * elem_bytes(p.ea)", "std::size_t(p.m * padded_k(p)) * elem_bytes(p.ea)")
edit("buffer_sets.cpp", "std::size_t(p.n * p.k) * elem_bytes(p.eb)", "std::size_t(p.n * padded_k(p)) * elem_bytes(p.eb)")
edit("matmul_desc.cpp", "matrix_layout(cuda_type(p.ea), p.k, p.m)", "matrix_layout(cuda_type(p.ea), padded_k(p), p.m)")
edit("matmul_desc.cpp", "matrix_layout(cuda_type(p.eb), p.k, p.n)", "matrix_layout(cuda_type(p.eb), padded_k(p), p.n)")
PY
}
harmless=(params.cpp tactics.cpp verification.cpp tolerance.cpp plugin.cpp buffer_sets.cpp matmul_desc.cpp inputs.cpp)
for i in 1 2 3 4 5 6 7 8; do
  if [ "$i" = "$PLANT_AT" ]; then
    plant
    commit "c$i gemm: pad K to a multiple of 1024 (planted)"
  else
    echo "// c$i: a harmless change" >>"$repo/kernels/cublaslt_gemm/${harmless[$((i - 1))]}"
    commit "c$i touch ${harmless[$((i - 1))]}"
  fi
done
planted=$(git -C "$repo" rev-parse "HEAD~$((8 - PLANT_AT))")

grid=$work/grid.json
python3 - ${SHAPES_M:-1 8 32 128 512 1024 2048 4096} >"$grid" <<'PY'
import json, sys
shapes = [{"id": f"m{m}_n{n}_k{k}_bf16", "params": {"m": m, "n": n, "k": k, "precision": "bf16"}}
          for n, k in ((6656, 19968), (19968, 6656)) for m in map(int, sys.argv[1:])]
print(json.dumps({"schema_version": 1, "shapes": shapes}, indent=1))
PY

rc=0
t0=$(date +%s.%N)
# shellcheck disable=SC2086
"$BIN/abharness" bisect --repo "$repo" --good HEAD~8 --bad HEAD --target cuda --grid "$grid" \
  --runs-root "$work/runs" --run-id bisect --color never ${ABH_FLAGS:-} \
  >"$work/bisect.out" 2>"$work/bisect.err" || rc=$?
t1=$(date +%s.%N)
vrc=0
"$BIN/abharness" verify "$work/runs/bisect" >"$work/verify.out" 2>&1 || vrc=$?
cat "$work/bisect.out"
tail -3 "$work/bisect.err"
echo "== bisect: exit $rc, wall $(python3 -c "print(f'{$t1-$t0:.1f}')") s; verify exit $vrc"
python3 - "$work/runs/bisect" "$planted" <<'PY'
import glob, json, sys
run, planted = sys.argv[1], sys.argv[2]
r = json.load(open(f"{run}/bisect-report.json"))
arms = len(glob.glob(f"{run}/probes/*/results/*/*.json"))
print(f"planted commit {planted[:12]}; {len(r['probes'])} probes, {arms} arms measured, "
      f"unbuildable {[c['sha'][:12] for c in r['unbuildable']]}, complete {r['complete']}")
found = 0
for s in r["shapes"]:
    fb = (s.get("first_bad") or {}).get("sha", "")
    c = {k: (v if v is not None else float("nan")) for k, v in (s.get("culprit") or {}).items()}
    ok = fb == planted
    found += ok
    print(f"  {s['shape']:24} {s['state']:10} first bad {fb[:12] or '-':12} "
          f"{'= planted' if ok else '!= planted'}  culprit {c.get('speedup', float('nan')):.4f} "
          f"[{c.get('lo', float('nan')):.4f}, {c.get('hi', float('nan')):.4f}] {c.get('verdict', '')}")
print(f"found the planted commit for {found} of {len(r['shapes'])} shapes")
PY
echo "work directory: $work"
