#!/usr/bin/env bash
# Usage: make-demo-repo.sh cpu|cuda DEST
# Creates a git repository at DEST with two commits of an example GEMM plugin: HEAD~1 is the
# baseline (naive kernel), HEAD the candidate (a faster kernel). Both share the plugin's ABI code
# and verification; only the kernel file differs, as in a real kernel PR.
set -euo pipefail
kind=${1:?usage: make-demo-repo.sh cpu|cuda DEST}
dest=${2:?usage: make-demo-repo.sh cpu|cuda DEST}
root=$(cd "$(dirname "$0")/.." && pwd)
[ ! -e "$dest" ] || { echo "make-demo-repo: $dest already exists" >&2; exit 2; }
mkdir -p "$dest"
git -C "$dest" init -q -b main
g() { git -C "$dest" -c user.name=abharness-demo -c user.email=demo@abharness.invalid "$@"; }
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
  *) echo "make-demo-repo: kind must be cpu or cuda" >&2; exit 2 ;;
esac
echo "demo repository $dest: $(g log --oneline | tr '\n' ';')"
