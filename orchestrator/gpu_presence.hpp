// Whether a run's plugins need a GPU, known as early as it can be, and the check that this machine
// has one, made before anything is built where the recipe says enough: a CUDA target on a machine
// without a GPU is refused in a second instead of after two builds, naming what is missing ("no
// NVIDIA driver" when there is none at all) and the fix.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/manifest.hpp"
#include "model/plan.hpp"

namespace abh {

// Why a recipe's plugin runs on a GPU, known before it is built: a Python plugin's device (CUDA
// unless its manifest says "device": "cpu"), or a recipe that compiles CUDA (it runs nvcc or
// compiles a .cu file). nullopt when only the built plugin can tell (it says so when described).
std::optional<std::string> gpu_reason_before_build(const BuildRecipe& recipe);

// Why this machine has no NVIDIA driver at all (libcuda.so.1 cannot be loaded), or nullopt.
std::optional<std::string> missing_nvidia_driver();

// Probes each of `gpus` (--gpus) through the worker, as a plan records them. UsageError when one
// cannot be used: "no NVIDIA driver" when there is none, the worker's reason otherwise, with
// `who` (the variant and why it needs a GPU) and the fixes: a machine with a GPU, or `other_fix`
// ("use --timing kernel").
void check_gpus_here(const std::filesystem::path& worker, const std::vector<std::string>& gpus,
                     const std::filesystem::path& scratch, const std::string& who,
                     const std::string& other_fix);

// The fix besides a GPU machine for a plugin that needs a GPU by what it is: a Python plugin may
// declare that it runs on the CPU, a C++ recipe may have a CPU target.
std::string plugin_gpu_fix(bool python_plugin);

// Graph and launch timings time GPU work, refused for a plugin that runs on the CPU: `timing`
// (of the --timing `list`) for variant `v`, whose device its recipe already says (a Python
// plugin's manifest) ...
[[noreturn]] void refuse_cpu_timing(const std::string& list, const std::string& timing,
                                    const Variant& v, const std::string& target);
// ... and, once both are built, for any variant built for the CPU (a C++ plugin's device is known
// only then), before the plan is written.
void refuse_cpu_timings(const Plan& plan);

}  // namespace abh
