#!/usr/bin/env bash
# Makes a build directory's binaries runnable on another Linux machine (the GPU machine has no
# libgit2 and nothing can be installed there): copies bin/* (the worker engine
# libabharness_worker.so included) and plugins/* into OUT, plus every shared library they need that
# is not part of the base system, the CUDA driver/toolkit or the build itself, into OUT/bin/lib and
# OUT/plugins/lib, and the Python launcher and helper module (bin/python/) beside them. The build
# already sets RPATH "$ORIGIN;$ORIGIN/lib", so the copies find those libraries next to themselves;
# this script checks that instead of rewriting it.
#
# usage: tools/relocatable.sh [--strip-debug] BUILD_DIR OUT_DIR
#   --strip-debug  drop debug sections from the copies (a RelWithDebInfo orchestrator is ~50 MB);
#                  the copies then have other SHA-256s than the build's files, so plan and measure
#                  with the same bundle.
# Target requirements: glibc >= the build machine's, libstdc++ of the same or newer GCC, and the
# CUDA 13 runtime libraries (cudart, cublasLt, cupti) plus the NVIDIA driver.
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
build=$(cd "$1" && pwd -P)
out=$2
[[ -d $build/bin ]] || { echo "$0: $build/bin does not exist: build first" >&2; exit 2; }
mkdir -p "$out/bin/lib" "$out/plugins/lib"

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

bundle() {  # FILE DEST_DIR
  local f=$1 dest=$2 line lib
  cp -f "$f" "$dest/"
  if ((strip_debug)); then strip --strip-debug "$dest/$(basename "$f")"; fi
  if ! readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -q '\$ORIGIN/lib'; then
    echo "$0: $f has no \$ORIGIN/lib RPATH: rebuild with the project's CMake settings" >&2
    exit 1
  fi
  while read -r line; do
    if [[ $line == *"not found"* ]]; then
      echo "$0: $f needs a library this machine cannot resolve: $line" >&2
      exit 1
    fi
    lib=$(awk '/=>/ {print $3}' <<<"$line")
    [[ -n $lib && -e $lib ]] || continue
    system_lib "$lib" && continue
    # The build's own libraries (the worker engine) are bundled beside the binaries, once: a second
    # copy in lib/ would be the one LD_LIBRARY_PATH finds, unstripped, with another SHA-256.
    [[ $(realpath "$lib") == "$build"/bin/* ]] && continue
    cp -fL "$lib" "$dest/lib/"
  done < <(ldd "$f")
}

n=0
for f in "$build"/bin/*; do
  [[ -f $f && -x $f ]] || continue
  bundle "$f" "$out/bin"
  n=$((n + 1))
done
for f in "$build"/plugins/*.so; do
  [[ -f $f ]] || continue
  bundle "$f" "$out/plugins"
  n=$((n + 1))
done
# The Python launcher and helper module: the orchestrator runs <python> bin/python/abharness_worker.py
# for Python plugins, and it loads bin/libabharness_worker.so.
if [[ -d $build/bin/python ]]; then
  rm -rf "$out/bin/python"
  cp -r "$build/bin/python" "$out/bin/python"
  find "$out/bin/python" -name __pycache__ -prune -exec rm -rf {} +
fi
echo "relocatable: $n binaries into $out; bundled libraries:"
ls "$out/bin/lib" "$out/plugins/lib" | sed 's/^/  /'
