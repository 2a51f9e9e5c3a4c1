# The repository's own manifest (abharness.json) builds its `cuda` target with one nvcc command
# that names every source file; CMake builds the same plugin from kernels/cublaslt_gemm/
# CMakeLists.txt. The two lists must name the same files: a file added to one only builds a
# plugin with undefined symbols that fails at dlopen, which on a machine without a GPU nothing
# else notices (it broke the H200 reference sweep once). Compares the two lists.
source "$ABH_TESTLIB"
python3 - "$ABH_SOURCE_DIR" <<'PY' || fail "the cuda target's sources differ between abharness.json and CMake"
import json, os, re, sys
root = sys.argv[1]
argv = json.load(open(os.path.join(root, "abharness.json")))["plugins"]["cuda"]["argv"]
manifest = {os.path.basename(a) for a in argv
            if a.startswith("kernels/cublaslt_gemm/") and a.endswith((".cpp", ".cu"))}
cmake = open(os.path.join(root, "kernels/cublaslt_gemm/CMakeLists.txt")).read()
lib = re.search(r"add_library\(abh_cublaslt_gemm MODULE([^)]*)\)", cmake, re.S)
assert lib, "no add_library(abh_cublaslt_gemm MODULE ...) in kernels/cublaslt_gemm/CMakeLists.txt"
built = set(lib.group(1).split())
for name, only in (("abharness.json", manifest - built), ("CMakeLists.txt", built - manifest)):
    if only:
        print("only in", name + ":", sorted(only))
if manifest != built:
    sys.exit(1)
print("abharness.json and CMake build the cuda target from the same", len(built), "files")
PY
echo PASS
