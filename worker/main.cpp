// abharness-worker: measures one arm of one shape in a process of its own (arm.hpp), and
// describes the machine and built plugins for the orchestrator. Its subcommands, flags,
// environment, error line and exit codes are the protocol in model/worker_protocol.hpp.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "arm.hpp"
#include "device.hpp"
#include "exit_error.hpp"
#include "model/worker_protocol.hpp"
#include "plugin.hpp"

namespace fs = std::filesystem;
using namespace abh;
using namespace abh::worker;
namespace wp = abh::worker_protocol;

namespace {

// The GPU device; in a worker built without CUDA, an unsupported request naming what it was.
const Device& gpu_or_unsupported(const std::string& what) {
  const Device* gpu = gpu_device();
  if (!gpu) throw ExitError(wp::kUnsupported, "this worker was built without CUDA: " + what);
  return *gpu;
}

// This machine's environment: the host alone, or with the GPU `gpu_selector` names.
void probe(const std::string& gpu_selector) {
  const Device& device =
      gpu_selector.empty() ? cpu_device() : gpu_or_unsupported("cannot probe GPU " + gpu_selector);
  std::cout << to_json(device.probe(gpu_selector)).dump(2) << std::endl;
}

// What a built plugin is, without running it: the orchestrator records this in the plan.
void describe(const fs::path& plugin_path) {
  Plugin plugin(plugin_path);
  json j{{"name", plugin.name()},
         {"abi_version", plugin.table().abi_version},
         {"device", plugin.is_cuda() ? "cuda" : "cpu"},
         {"libraries", plugin.library_versions()}};
  std::cout << j.dump(2) << std::endl;
}

// Telemetry of one GPU right now, for `abharness doctor`.
void telemetry_now(const std::string& gpu_selector) {
  const Device& gpu = gpu_or_unsupported("no telemetry for GPU " + gpu_selector);
  TelemetrySnapshot t = gpu.telemetry(gpu_selector);
  json j = to_json(t);
  j["throttled"] = gpu.is_throttled(t);
  std::cout << j.dump(2) << std::endl;
}

// Started by an orchestrator: die with it. An orphaned worker that finished after the
// orchestrator was killed would write a result that a resume did not plan for. False when the
// orchestrator is already gone.
bool follow_parent() {
  const char* parent = std::getenv(wp::kParentPidEnv);
  if (!parent) return true;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  return ::getppid() == std::atoi(parent);
}

// Every failure ends in one error line on stderr and the exit code its kind maps to.
int fail(const std::exception& e, int code) {
  std::cerr << wp::error_line(e.what()) << std::endl;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  const auto process_start = std::chrono::steady_clock::now();
  CLI::App app{"abharness-worker: measures one arm in a process of its own (started by abharness)"};
  app.require_subcommand(1);
  ArmRequest arm;
  auto* run = app.add_subcommand(wp::kRun, "measure one arm of a planned run");
  run->add_option(wp::kRunDirFlag, arm.run_dir, "run directory holding plan.json")->required();
  run->add_option(wp::kShapeFlag, arm.shape, "shape id from the plan")->required();
  run->add_option(wp::kArmFlag, arm.arm, "arm name from the plan (A1, B, A2, ...)")->required();
  run->add_flag(wp::kWarmupFlag, arm.warmup,
                "measure as usual but write no result (the warm-up before a lane's first arm)");
  std::string gpu;
  auto* pr = app.add_subcommand(wp::kProbe, "print this machine's environment as JSON");
  pr->add_option(wp::kGpuFlag, gpu, "GPU index or UUID (omit for a CPU-only probe)");
  std::string plugin_path;
  auto* de =
      app.add_subcommand(wp::kDescribe, "print a plugin's name, device and library versions");
  de->add_option(wp::kPluginFlag, plugin_path, "path of the plugin shared object")->required();
  std::string tgpu = "0";
  auto* te = app.add_subcommand(wp::kTelemetry, "print one GPU's clocks, power and throttling now");
  te->add_option(wp::kGpuFlag, tgpu, "GPU index or UUID")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!follow_parent()) return wp::kRuntime;
  try {
    if (*run)
      measure_arm(arm, process_start);
    else if (*de)
      describe(plugin_path);
    else if (*te)
      telemetry_now(tgpu);
    else
      probe(gpu);
    return wp::kOk;
  } catch (const ExitError& e) {
    return fail(e, e.code);
  } catch (const PluginError& e) {
    return fail(e, e.status == ABH_ERR_UNSUPPORTED    ? wp::kUnsupported
                   : e.status == ABH_ERR_WRONG_RESULT ? wp::kWrongResult
                                                      : wp::kRuntime);
  } catch (const UsageError& e) {
    return fail(e, wp::kUsage);
  } catch (const std::exception& e) {
    return fail(e, wp::kRuntime);
  }
}
