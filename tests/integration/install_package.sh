# `cmake --install` gives a tree a kernel repository can build its plugin against and run from,
# with no environment variables: the installed layout is checked file by file, a tiny separate
# project configures with find_package(abharness) and builds a plugin linking abharness::plugin,
# and the installed abharness runs a real A/B/A sweep of a repository whose recipe uses that
# package (its worker, its headers for ${ABHARNESS_INCLUDE} and its data/ found from its own
# location), then `verify`, `roofline` (the installed GPU table) and `--version`.
source "$ABH_TESTLIB"
build=$(dirname "$ABH_BIN")
cmake --install "$build" --prefix "$T/prefix" --strip >install.log 2>&1 || { cat install.log >&2; fail "cmake --install --strip"; }
P=$T/prefix
# Stripped, as the README installs it: no debug information left, and everything below still works.
readelf -S "$P/bin/abharness" | grep -q "\.debug_info" && fail "the stripped install kept debug information"
for f in bin/abharness bin/abharness-worker include/abharness/plugin.h \
         include/abharness/plugin_support.hpp include/abharness/plugin_params.hpp \
         include/abharness/plugin_cuda.hpp \
         bin/python/abharness_front_end.py bin/python/abharness/__init__.py \
         bin/python/abharness/_front_end/main.py bin/python/abharness/_front_end/protocol.py \
         lib/abharness/libabh_cpu_gemm.so \
         share/abharness/data/gpus.json share/abharness/schemas/grid.schema.json \
         share/abharness/schemas/manifest.schema.json share/doc/abharness/README.md \
         share/bash-completion/completions/abharness share/zsh/site-functions/_abharness \
         share/fish/vendor_completions.d/abharness.fish share/man/man1/abharness.1 \
         lib/cmake/abharness/abharnessConfig.cmake \
         lib/cmake/abharness/abharnessConfigVersion.cmake; do
  [ -e "$P/$f" ] || fail "the install lacks $f"
done

# Nothing below may find the build or source tree through the environment.
unset ABH_DATA_DIR ABHARNESS_INCLUDE_DIR
mkdir plugin-src
cp "$ABH_SOURCE_DIR/kernels/cpu_gemm/plugin.cpp" "$ABH_SOURCE_DIR/kernels/cpu_gemm/gemm_kernel.hpp" \
   "$ABH_SOURCE_DIR/kernels/cpu_gemm/kernel_blocked.cpp" plugin-src/
cat > plugin-src/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(mykernel CXX)
find_package(abharness 0.1 REQUIRED)
# No JSON library: the plugin reads its parameters with the installed abh_plugin::Params.
add_library(mykernel MODULE plugin.cpp kernel_blocked.cpp)
target_link_libraries(mykernel PRIVATE abharness::plugin)
CMAKE
cmake -S plugin-src -B plugin-build -DCMAKE_PREFIX_PATH="$P" >cfg.log 2>&1 || { cat cfg.log >&2; fail "find_package(abharness) configure"; }
cmake --build plugin-build >bld.log 2>&1 || { cat bld.log >&2; fail "building a plugin against the installed package"; }
[ -f plugin-build/libmykernel.so ] || fail "no plugin built"
nm -D plugin-build/libmykernel.so | grep -q abh_plugin_ || fail "the built plugin exports no abh_plugin_ entry points"
pass "find_package(abharness) builds a plugin against abharness::plugin"

# A kernel repository that builds its plugin with that package, A/B/A'd by the installed binary.
# Its recipe names no prefix and the prefix's bin/ is not on PATH: the installed abharness points
# find_package at its own package (abharness_DIR in the recipe's environment).
bash "$ABH_SOURCE_DIR/examples/make-demo-repo.sh" cpu repo >/dev/null
cp plugin-src/CMakeLists.txt repo/
sed -i 's/kernel_blocked.cpp/kernel.cpp/' repo/CMakeLists.txt
cat > repo/abharness.json <<JSON
{ "schema_version": 1, "plugins": { "cpu": {
  "argv": ["sh", "-c", "cmake -S . -B b >/dev/null && cmake --build b >/dev/null && cp b/libmykernel.so libk.so"],
  "artifact": "libk.so" } } }
JSON
git_q -C repo add -A && git_q -C repo commit -q -m "build with find_package(abharness)"
# The baseline is the same tree with the naive kernel: revert the kernel alone on a branch.
git_q -C repo checkout -q -b base
git_q -C repo show HEAD~2:kernel.cpp > repo/kernel.cpp
git_q -C repo commit -q -am "baseline kernel with the package build"
small_grid
env -u ABH_DATA_DIR -u ABHARNESS_INCLUDE_DIR "$P/bin/abharness" run --repo repo --baseline base \
  --candidate main --grid grid.json --runs-root runs --run-id inst "${FAST[@]}" --quiet \
  >run.out 2>run.err || { cat run.out run.err >&2; fail "the installed abharness run"; }
[ -f runs/inst/report.md ] || fail "no report from the installed run"
[ "$(jget runs/inst/plan.json 'j["variants"][1]["recipe"]["env"]["abharness_DIR"]')" = "$P/lib/cmake/abharness" ] ||
  fail "the recipe's abharness_DIR is not the installed package: $(grep -o '"abharness_DIR"[^,]*' runs/inst/plan.json)"
"$P/bin/abharness" verify runs/inst >/dev/null 2>&1 || fail "the installed verify refuses its own run"
pass "the installed abharness runs an A/B/A sweep without environment variables"

# A recipe using ${ABHARNESS_INCLUDE} gets the installed headers.
mkdir repo2 && cp "$ABH_SOURCE_DIR/examples/cpu-gemm/abharness.json" repo2/
cp "$ABH_SOURCE_DIR/kernels/cpu_gemm/plugin.cpp" "$ABH_SOURCE_DIR/kernels/cpu_gemm/gemm_kernel.hpp" repo2/
cp "$ABH_SOURCE_DIR/kernels/cpu_gemm/kernel_blocked.cpp" repo2/kernel.cpp
git_q -C repo2 init -q -b main && git_q -C repo2 add -A && git_q -C repo2 commit -q -m one
env -u ABH_DATA_DIR -u ABHARNESS_INCLUDE_DIR "$P/bin/abharness" run --repo repo2 --baseline main \
  --candidate main --grid grid.json --runs-root runs --run-id inc "${FAST[@]}" --quiet \
  >run2.out 2>run2.err || { cat run2.out run2.err >&2; fail "a recipe using \${ABHARNESS_INCLUDE} from the install"; }
grep -rq -- "-I$P/include" runs/inc/plan.json || fail "\${ABHARNESS_INCLUDE} is not the installed include dir"

"$P/bin/abharness" roofline --list-gpus >gpus.txt 2>&1 || { cat gpus.txt >&2; fail "the installed roofline cannot read its GPU table"; }
grep -qi h200 gpus.txt || fail "the installed GPU table lists no H200"
"$P/bin/abharness" --version >version.txt || fail "--version"
grep -q "abharness 0\." version.txt || fail "--version prints no version: $(cat version.txt)"
pass "installed headers, GPU table and --version found from the binary's own location"

# The installed demo script makes the CPU demo repository without the source tree, and the
# installed abharness A/B/As it.
bash "$P/share/doc/abharness/examples/make-demo-repo.sh" cpu repo3 >demo.log 2>&1 ||
  { cat demo.log >&2; fail "the installed make-demo-repo.sh"; }
grep -rq "$ABH_SOURCE_DIR" repo3 && fail "the installed demo repository refers to the source tree"
env -u ABH_DATA_DIR -u ABHARNESS_INCLUDE_DIR "$P/bin/abharness" run --repo repo3 --baseline HEAD~1 \
  --candidate HEAD --grid grid.json --runs-root runs --run-id demo3 "${FAST[@]}" --quiet \
  >run3.out 2>run3.err || { cat run3.out run3.err >&2; fail "the installed demo repository's run"; }
pass "the installed make-demo-repo.sh works without the source tree"
