#!/usr/bin/env bash
# Usage: make-demo-repo.sh cpu|cuda|numpy|triton DEST
# Creates a git repository at DEST with two commits of an example GEMM plugin: HEAD~1 is the
# baseline (naive kernel), HEAD the candidate (a faster kernel). Both share the plugin's ABI code
# (or, for the Python plugins numpy and triton, the problem module) and verification; only the
# kernel file differs, as in a real kernel PR.
set -euo pipefail
usage="usage: make-demo-repo.sh cpu|cuda|numpy|triton DEST"
kind=${1:?$usage}
dest=${2:?$usage}
root=$(cd "$(dirname "$0")/.." && pwd)
[ ! -e "$dest" ] || { echo "make-demo-repo: $dest already exists" >&2; exit 2; }
mkdir -p "$dest"
git -C "$dest" init -q -b main
g() { git -C "$dest" -c user.name=abharness-demo -c user.email=demo@abharness.invalid "$@"; }
# Bytecode caches are neither sources nor part of a commit.
python_tidy() {
  find "$dest" -name __pycache__ -prune -exec rm -rf {} +
  printf '__pycache__/\n' >"$dest/.gitignore"
}
case "$kind" in
  cpu)
    cp "$root/examples/cpu-gemm/abharness.json" "$root/kernels/cpu_gemm/plugin.cpp" \
       "$root/kernels/cpu_gemm/gemm_kernel.hpp" "$dest/"
    cp "$root/examples/cpu-gemm/kernel_naive.cpp" "$dest/kernel.cpp"
    g add -A && g commit -q -m "baseline: naive i-j-k GEMM"
    cp "$root/kernels/cpu_gemm/kernel_blocked.cpp" "$dest/kernel.cpp"
    g add -A && g commit -q -m "candidate: cache-blocked i-k-j GEMM"
    ;;
  cuda)
    cp "$root/examples/cuda-gemm/abharness.json" "$root/examples/cuda-gemm/plugin.cu" \
       "$root/examples/cuda-gemm/gemm_kernel.cuh" "$dest/"
    cp "$root/examples/cuda-gemm/kernel_naive.cu" "$dest/kernel.cu"
    g add -A && g commit -q -m "baseline: naive CUDA GEMM"
    cp "$root/examples/cuda-gemm/kernel_tiled.cu" "$dest/kernel.cu"
    g add -A && g commit -q -m "candidate: shared-memory tiled CUDA GEMM"
    ;;
  numpy)
    ex=$root/examples/python-numpy
    cp -r "$ex/abharness.json" "$ex/kernels" "$dest/"
    cp "$ex/gemm_outer.py" "$dest/kernels/gemm.py"
    python_tidy
    g add -A && g commit -q -m "baseline: GEMM as k rank-1 updates"
    cp "$ex/gemm_einsum.py" "$dest/kernels/gemm.py"
    g add -A && g commit -q -m "candidate: GEMM as one einsum"
    ;;
  triton)
    ex=$root/examples/python-triton
    cp -r "$ex/abharness.json" "$ex/bench" "$dest/"
    cp "$ex/kernel_tiled.py" "$dest/bench/kernel.py"
    python_tidy
    g add -A && g commit -q -m "baseline: plain tiled Triton GEMM"
    cp "$ex/kernel_autotuned.py" "$dest/bench/kernel.py"
    g add -A && g commit -q -m "candidate: grouped tile order, eight tile configs as tactics"
    ;;
  *) echo "make-demo-repo: $usage" >&2; exit 2 ;;
esac
echo "demo repository $dest: $(g log --oneline | tr '\n' ';')"
