#!/usr/bin/env bash
# README command 2: install dependencies, build everything (CUDA code included when the toolkit is
# at /usr/local/cuda) and run every test with CTest. GPU tests skip cleanly without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure -j2 --timeout 900
