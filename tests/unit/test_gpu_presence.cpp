// Whether a recipe's plugin needs a GPU, as far as the recipe says before it is built
// (orchestrator/gpu_presence.hpp), and the diagnosis of a machine without an NVIDIA driver.
#ifdef ABH_HAVE_ORCHESTRATOR

#include <doctest/doctest.h>

#include "gpu_presence.hpp"

using namespace abh;

TEST_CASE("gpu presence: a recipe that compiles CUDA, or a Python plugin on CUDA, needs a GPU") {
  BuildRecipe r;
  r.argv = {"c++", "-O2", "-shared", "-fPIC", "plugin.cpp", "-o", "libk.so"};
  CHECK_FALSE(gpu_reason_before_build(r).has_value());
  r.argv = {"/usr/local/cuda/bin/nvcc", "-shared", "plugin.cu", "-o", "libk.so"};
  CHECK(gpu_reason_before_build(r) == "compiles CUDA (its recipe runs nvcc)");
  r.argv = {"clang++", "--cuda-gpu-arch=sm_90", "kernels/gemm.cu"};
  CHECK(gpu_reason_before_build(r) == "compiles CUDA (its recipe compiles gemm.cu)");
  r.shell = true;
  r.argv = {"make -j4 && nvcc -shared -o libk.so k.o"};
  CHECK(gpu_reason_before_build(r) == "compiles CUDA (its recipe runs nvcc)");
  r.argv = {"make -j4 CUDA=0"};
  CHECK_FALSE(gpu_reason_before_build(r).has_value());
  r.python = PythonPlugin{"bench.matmul", "make_problem", "cuda", ""};
  CHECK(gpu_reason_before_build(r) ==
        "is a Python plugin, which runs on a GPU unless its manifest says \"device\": \"cpu\"");
  r.python->device = "cpu";
  CHECK_FALSE(gpu_reason_before_build(r).has_value());
}

TEST_CASE("gpu presence: no NVIDIA driver is said as such") {
  const std::optional<std::string> missing = missing_nvidia_driver();
  if (missing) {
    CHECK(missing->rfind("libcuda.so.1 cannot be loaded: ", 0) == 0);
  } else {
    MESSAGE("this machine has an NVIDIA driver: only the diagnosis of none is untested here");
  }
}

#endif
