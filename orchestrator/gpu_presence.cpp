#include "gpu_presence.hpp"

#include <dlfcn.h>

#include <memory>
#include <sstream>

#include "model/timing.hpp"
#include "planner.hpp"
#include "system/error.hpp"
#include "system/process.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

struct DlClose {
  void operator()(void* handle) const { ::dlclose(handle); }
};

// What a word of a recipe's command line says of CUDA: "runs nvcc", "compiles x.cu", or "".
std::string cuda_in(const std::string& word) {
  const std::string name = fs::path(word).filename().string();
  if (name == "nvcc") return "runs nvcc";
  if (name.size() > 3 && name.ends_with(".cu")) return "compiles " + name;
  return "";
}

}  // namespace

std::optional<std::string> gpu_reason_before_build(const BuildRecipe& recipe) {
  if (recipe.python) {
    if (recipe.python->device != "cuda") return std::nullopt;
    return "is a Python plugin, which runs on a GPU unless its manifest says \"device\": \"cpu\"";
  }
  // A shell recipe is one command line: its words are split here as a shell would, roughly.
  for (const std::string& item : recipe.argv) {
    std::istringstream words(item);
    for (std::string w; words >> w;)
      if (const std::string what = cuda_in(w); !what.empty())
        return "compiles CUDA (its recipe " + what + ")";
  }
  return std::nullopt;
}

std::optional<std::string> missing_nvidia_driver() {
  // Loaded only to see whether it can be, after a probe failed: the orchestrator itself never
  // calls the driver.
  const std::unique_ptr<void, DlClose> cuda(::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL));
  if (cuda) return std::nullopt;
  const char* why = ::dlerror();
  std::string reason = std::string("libcuda.so.1 cannot be loaded: ") + (why ? why : "not found");
  std::error_code ec;
  if (!fs::exists("/proc/driver/nvidia", ec)) reason += "; no /proc/driver/nvidia";
  try {
    find_program("nvidia-smi");
  } catch (const Error&) {
    reason += "; no nvidia-smi on PATH";
  }
  return reason;
}

void check_gpus_here(const fs::path& worker, const std::vector<std::string>& gpus,
                     const fs::path& scratch, const std::string& who,
                     const std::string& other_fix) {
  try {
    probe_machine(worker, true, gpus, scratch);
    return;
  } catch (const Error& e) {
    const std::optional<std::string> no_driver = missing_nvidia_driver();
    const std::string problem =
        no_driver ? "this machine has no NVIDIA driver (" + *no_driver + ")"
                  : "no GPU of --gpus can be used here (" + std::string(e.what()) + ")";
    throw UsageError(who + ", but " + problem +
                     ": run it on a machine with an NVIDIA GPU and its driver, or " + other_fix);
  }
}

std::string plugin_gpu_fix(bool python_plugin) {
  return python_plugin ? "if its run() does host work, declare \"device\": \"cpu\" in the "
                         "\"python\" object of its recipe in abharness.json"
                       : "choose a target that runs on the CPU (--target)";
}

void refuse_cpu_timing(const std::string& list, const std::string& timing, const Variant& v,
                       const std::string& target) {
  throw UsageError("--timing " + list + ": " +
                   timing_refusal(timing, false, v.name + " (" + target + ")"));
}

void refuse_cpu_timings(const Plan& plan) {
  if (const auto t = first_gpu_timing(plan.settings.timing))
    for (const Variant& v : plan.variants)
      if (v.device != "cuda") refuse_cpu_timing(plan.settings.timing, *t, v, plan.plugin_target);
}

}  // namespace abh
