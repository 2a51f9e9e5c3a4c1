// The worker engine (libabharness_worker.so, include/abharness/worker.h): measures one arm of one
// shape in a process of its own (arm.hpp), and describes the machine and built plugins for the
// orchestrator. Its subcommands, flags, environment, error line and exit codes are the protocol in
// model/worker_protocol.hpp. Front ends call abh_worker_main: the abharness-worker executable
// (main.cpp) and the Python front end (python/abharness_front_end.py).
#include <abharness/worker.h>
#include <dlfcn.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "arm.hpp"
#include "device.hpp"
#include "dry_check.hpp"
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

// When this process started, on the steady clock: from the kernel's record of the start (in clock
// ticks since boot, /proc/self/stat field 22), so that a front end's own start-up (an
// interpreter, its imports) counts in the arm's start-up time. Resolution: one clock tick (10 ms).
std::chrono::steady_clock::time_point process_start() {
  const auto now = std::chrono::steady_clock::now();
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  std::istringstream rest(paren == std::string::npos ? "" : stat.substr(paren + 2));
  std::vector<std::string> fields;  // fields[0] is field 3 (the state)
  for (std::string f; fields.size() < 20 && rest >> f;) fields.push_back(f);
  timespec boot{};
  const long ticks = ::sysconf(_SC_CLK_TCK);
  if (fields.size() < 20 || ticks <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
    throw Error("cannot read this process's start time from /proc/self/stat");
  const double age =
      boot.tv_sec + boot.tv_nsec * 1e-9 - std::stod(fields[19]) / static_cast<double>(ticks);
  return now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(std::max(0.0, age)));
}

// The worker's files as this process runs them: its own executable or the front end's script and
// package, and the engine library this code was loaded from; the rest as installed beside the
// executable.
wp::WorkerFiles running_files(const abh_worker_front_end* fe) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&abh_worker_main), &info) == 0 || !info.dli_fname)
    throw Error("cannot find the worker engine's own file (dladdr)");
  const fs::path engine = fs::canonical(info.dli_fname);
  // The directory of the executable and of python/, which holds the front end's script.
  const fs::path bin = fe ? fs::canonical(fe->script_path).parent_path().parent_path()
                          : fs::canonical("/proc/self/exe").parent_path();
  wp::WorkerFiles files = wp::worker_files(bin);
  files.engine = engine;
  if (fe) {
    files.front_end = fs::canonical(fe->script_path);
    files.python_package = bin / wp::kPythonPackage;
  } else {
    files.executable = fs::canonical("/proc/self/exe");
  }
  return files;
}

// A front end's table stands in for the plan's plugin only where the plan says the plugin is of
// its kind; anything else is a protocol error, not something to measure.
void check_front_end(const abh_worker_front_end* fe) {
  if (!fe) return;
  if (fe->version != ABH_WORKER_FRONT_END_VERSION)
    throw UsageError("the worker front end speaks version " + std::to_string(fe->version) +
                     " but this engine speaks " + std::to_string(ABH_WORKER_FRONT_END_VERSION) +
                     ": the front end and libabharness_worker.so come from different builds");
  if (!fe->kind || !fe->plugin || !fe->script_path || !fe->identity_json)
    throw UsageError("the worker front end left a required field empty");
}

int run_worker(int argc, char** argv, const abh_worker_front_end* front_end) {
  const auto started = process_start();
  CLI::App app{"abharness-worker: measures one arm in a process of its own (started by abharness)"};
  app.require_subcommand(1);
  ArmRequest arm;
  auto* run = app.add_subcommand(wp::kRun, "measure one arm of a planned run");
  run->add_option(wp::kRunDirFlag, arm.run_dir, "run directory holding plan.json")->required();
  run->add_option(wp::kShapeFlag, arm.shape, "shape id from the plan")->required();
  run->add_option(wp::kArmFlag, arm.arm, "arm name from the plan (A1, B, A2, ...)")->required();
  run->add_flag(wp::kWarmupFlag, arm.warmup,
                "measure as usual but write no result (the warm-up before a lane's first arm)");
  run->add_flag(wp::kAheadFlag, arm.ahead,
                "started ahead: after loading the plan, plugin and driver, wait on stdin (a socket "
                "from abharness) for the turn to open the device");
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
  DryCheckRequest dry;
  auto* ch = app.add_subcommand(wp::kCheck, "create and destroy a plugin's problem for each shape");
  ch->add_option(wp::kPluginFlag, dry.plugin, "path of the plugin shared object")->required();
  ch->add_option(wp::kShapesFlag, dry.shapes, "grid file of the shapes to check")->required();
  ch->add_option(wp::kTacticFlag, dry.tactic, "a tactic every problem must accept, or auto")
      ->capture_default_str();
  ch->add_option(wp::kGpuFlag, dry.gpu, "GPU index or UUID (a CUDA plugin)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (106 for a missing option, ...) would mean nothing to the orchestrator,
    // which reads the worker's exit codes (worker_protocol.hpp): a bad invocation is usage.
    return app.exit(e) == 0 ? wp::kOk : wp::kUsage;
  }
  if (!follow_parent()) return wp::kRuntime;
  try {
    check_front_end(front_end);
    if (front_end && !*run) throw UsageError("a worker front end runs arms only (subcommand run)");
    if (*run) {
      arm.front_end = front_end;
      arm.files = running_files(front_end);
      measure_arm(arm, started);
    } else if (*de)
      describe(plugin_path);
    else if (*ch)
      dry_check(dry);
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

}  // namespace

extern "C" int abh_worker_main(int argc, char** argv, const abh_worker_front_end* front_end) {
  try {
    return run_worker(argc, argv, front_end);
  } catch (const std::exception& e) {
    // Nothing may escape into a C caller (an interpreter): the error line and code still apply.
    return fail(e, wp::kRuntime);
  }
}
