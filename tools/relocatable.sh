#!/usr/bin/env bash
# Makes a bundle of a build that runs on another Linux machine (the GPU machine has no libgit2 and
# nothing can be installed there): `cmake --install` of the build into OUT_DIR, so the bundle holds
# what an installed tree holds (bin/, the plugin headers in include/abharness/, the built-in
# plugins in lib/abharness/, data/ and schemas/ in share/abharness/), plus every shared library
# the binaries and plugins need that is not part of the base system or the CUDA driver/toolkit,
# in OUT_DIR/lib. The installed binaries find their worker, headers and GPU table from their own
# location and those libraries through their RUNPATH ($ORIGIN/../lib), so a bundle moved anywhere
# needs neither ABH_DATA_DIR nor ABHARNESS_INCLUDE_DIR. This script checks the RUNPATHs instead of
# rewriting them.
#
# usage: tools/relocatable.sh [--strip-debug] BUILD_DIR OUT_DIR
#   --strip-debug  drop debug sections from the copies (a RelWithDebInfo orchestrator is ~50 MB);
#                  the copies then have other SHA-256s than the build's files, so plan and measure
#                  with the same bundle.
# Target requirements: glibc >= the build machine's, libstdc++ of the same or newer GCC, and the
# CUDA 13 runtime libraries (cudart, cublasLt, cupti) plus the NVIDIA driver. A bundled library's
# own dependencies are not covered by the executables' RUNPATH: on a machine that lacks them too
# (libgit2's libmbedtls, libssh2, ...), put OUT_DIR/lib on LD_LIBRARY_PATH (docs/gpu.md).
set -euo pipefail
strip_debug=0
if [[ ${1:-} == --strip-debug ]]; then
  strip_debug=1
  shift
fi
if [[ $# -ne 2 ]]; then
  echo "usage: $0 [--strip-debug] BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
[[ -f $build/cmake_install.cmake ]] || { echo "$0: $build is not a configured build directory" >&2; exit 2; }
[[ -x $build/bin/abharness-worker ]] || { echo "$0: $build/bin has no worker: build first" >&2; exit 2; }
mkdir -p "$2"
out=$(cd "$2" && pwd)
cmake --install "$build" --prefix "$out" >/dev/null
mkdir -p "$out/lib"

# Libraries expected on every target: the C runtime, the GCC runtime, and CUDA/driver libraries
# (which must match the target's driver, so copying them would be wrong).
system_lib() {
  case $(basename "$1") in
    ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libutil.so*) return 0 ;;
    libstdc++.so*|libgcc_s.so*) return 0 ;;
    libcuda.so*|libcudart.so*|libcublas*|libcupti.so*|libnvidia-ml.so*|libnvrtc*|libnvJitLink*) return 0 ;;
    linux-vdso*) return 0 ;;
  esac
  return 1
}

bundle() {  # an installed ELF file: check its RUNPATH, copy its non-system libraries to lib/
  local f=$1 line lib
  if ((strip_debug)); then strip --strip-debug "$f"; fi
  if ! readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -q '\$ORIGIN'; then
    echo "$0: $f has no \$ORIGIN RUNPATH: rebuild with the project's CMake settings" >&2
    exit 1
  fi
  while read -r line; do
    if [[ $line == *"not found"* ]]; then
      echo "$0: $f needs a library this machine cannot resolve: $line" >&2
      exit 1
    fi
    lib=$(awk '/=>/ {print $3}' <<<"$line")
    [[ -n $lib && -e $lib ]] || continue
    [[ $lib == "$out"/* ]] && continue
    system_lib "$lib" && continue
    cp -fL "$lib" "$out/lib/"
  done < <(ldd "$f")
}

n=0
for f in "$out"/bin/* "$out"/lib/libabharness_worker.so "$out"/lib/abharness/*.so; do
  [[ -f $f ]] || continue
  bundle "$f"
  n=$((n + 1))
done
echo "relocatable: $n binaries and plugins installed into $out; bundled libraries:"
ls "$out/lib" | grep -v -e '^abharness$' -e '^cmake$' | sed 's/^/  /'
