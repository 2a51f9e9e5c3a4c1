#!/usr/bin/env bash
# Configures and builds abharness into ${BUILD_DIR:-build}: every target, or only those named in
# ABH_BUILD_TARGETS (space-separated; the demo builds the two programs it runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
for t in ${ABH_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
