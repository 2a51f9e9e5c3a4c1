#!/usr/bin/env bash
# Usage: make-demo-repo.sh cpu|cuda|numpy|triton|rmsnorm DEST
# Creates a git repository at DEST with two commits of an example GEMM plugin: HEAD~1 is the
# baseline (naive kernel), HEAD the candidate (a faster kernel). Both share the plugin's ABI code
# (or, for the Python plugins numpy and triton, the problem module) and verification; only the
# kernel file differs, as in a real kernel PR.
set -euo pipefail
usage="usage: make-demo-repo.sh cpu|cuda|numpy|triton|rmsnorm DEST"
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
# two_revisions FILE BASELINE_SRC BASELINE_MSG CANDIDATE_SRC CANDIDATE_MSG: the baseline commit
# has BASELINE_SRC as FILE, the candidate commit CANDIDATE_SRC; nothing else differs.
two_revisions() {
  cp "$2" "$dest/$1"
  g add -A && g commit -q -m "$3"
  cp "$4" "$dest/$1"
  g add -A && g commit -q -m "$5"
}
case "$kind" in
  cpu)
    cp "$root/examples/cpu-gemm/abharness.json" "$root/kernels/cpu_gemm/plugin.cpp" \
       "$root/kernels/cpu_gemm/gemm_kernel.hpp" "$dest/"
    two_revisions kernel.cpp "$root/examples/cpu-gemm/kernel_naive.cpp" "baseline: naive i-j-k GEMM" \
      "$root/kernels/cpu_gemm/kernel_blocked.cpp" "candidate: cache-blocked i-k-j GEMM"
    ;;
  cuda)
    cp "$root/examples/cuda-gemm/abharness.json" "$root/examples/cuda-gemm/plugin.cu" \
       "$root/examples/cuda-gemm/gemm_kernel.cuh" "$dest/"
    two_revisions kernel.cu "$root/examples/cuda-gemm/kernel_naive.cu" "baseline: naive CUDA GEMM" \
      "$root/examples/cuda-gemm/kernel_tiled.cu" "candidate: shared-memory tiled CUDA GEMM"
    ;;
  numpy)
    ex=$root/examples/python-numpy
    cp -r "$ex/abharness.json" "$ex/kernels" "$dest/"
    python_tidy
    two_revisions kernels/gemm.py "$ex/gemm_outer.py" "baseline: GEMM as k rank-1 updates" \
      "$ex/gemm_einsum.py" "candidate: GEMM as one einsum"
    ;;
  triton)
    ex=$root/examples/python-triton
    cp -r "$ex/abharness.json" "$ex/bench" "$dest/"
    python_tidy
    two_revisions bench/kernel.py "$ex/kernel_tiled.py" "baseline: plain tiled Triton GEMM" \
      "$ex/kernel_autotuned.py" "candidate: grouped tile order, eight tile configs as tactics"
    ;;
  rmsnorm)
    ex=$root/examples/python-rmsnorm
    cp -r "$ex/abharness.json" "$ex/bench" "$dest/"
    python_tidy
    two_revisions bench/kernel.py "$ex/kernel_eager.py" "baseline: RMSNorm in eager PyTorch" \
      "$ex/kernel_triton.py" "candidate: RMSNorm as one Triton kernel"
    ;;
  *) echo "make-demo-repo: $usage" >&2; exit 2 ;;
esac
echo "demo repository $dest: $(g log --oneline | tr '\n' ';')"
