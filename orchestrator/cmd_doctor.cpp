// `abharness doctor`: is this machine ready to produce numbers a reviewer can trust? Checks the
// binaries and toolchains a sweep needs, then each GPU through a worker (the same probe a plan
// records): identity, driver, CUDA runtime, CUPTI, and clocks, power and throttling right now.
// Every finding names its fix; nothing is changed on the machine.
#include <git2.h>
#include <unistd.h>

#include <iostream>

#include "exit_codes.hpp"
#include "gpu_presence.hpp"
#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "run_command.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "system/sha256.hpp"
#include "system/version.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

struct Doctor {
  int problems = 0;
  void ok(const std::string& what) { std::cout << "  ok    " << what << "\n"; }
  void warn(const std::string& what) { std::cout << "  warn  " << what << "\n"; }
  void bad(const std::string& what) {
    std::cout << "  FAIL  " << what << "\n";
    ++problems;
  }
};

std::string program_or_empty(const std::string& name) {
  try {
    return find_program(name).string();
  } catch (const Error&) {
    return "";
  }
}

void check_gpu(Doctor& d, const fs::path& worker, const std::string& sel, const fs::path& tmp) {
  json probe, tel;
  try {
    probe = worker_json(worker, worker_protocol::probe_args(sel), tmp);
  } catch (const std::exception& e) {
    const std::optional<std::string> no_driver = missing_nvidia_driver();
    d.warn("GPU " + sel + ": " + (no_driver ? "no NVIDIA driver (" + *no_driver + ")" : e.what()) +
           " — CUDA plugins cannot run here; CPU plugins can (--target cpu)");
    return;
  }
  const json& g = probe["gpu"];
  d.ok("GPU " + sel + ": " + g.value("name", "?") + " " + g.value("uuid", "?") + ", sm_" +
       std::to_string(g.value("cc_major", 0)) + std::to_string(g.value("cc_minor", 0)) +
       ", driver " + probe.value("driver_version", "?") + ", CUDA runtime " +
       probe.value("cuda_runtime_version", "?") + ", CUPTI " + probe.value("cupti_version", "?"));
  try {
    tel = worker_json(worker, worker_protocol::telemetry_args(sel), tmp);
  } catch (const std::exception& e) {
    d.warn("GPU " + sel + " telemetry: " + e.what());
    return;
  }
  if (!tel.value("available", false)) {
    d.warn("GPU " + sel + ": no NVML telemetry (" + tel.value("unavailable_reason", "?") +
           "): results will say throttling could not be checked");
    return;
  }
  d.ok("GPU " + sel + " now: SM " + std::to_string(tel.value("sm_clock_mhz", 0)) + " MHz, memory " +
       std::to_string(tel.value("mem_clock_mhz", 0)) + " MHz, " +
       std::to_string(tel.value("temperature_c", 0)) + " C, " +
       std::to_string(static_cast<int>(tel.value("power_w", 0.0))) + " W");
  if (tel.value("throttled", false)) {
    std::string names;
    for (const auto& n : tel["throttle_names"])
      names += (names.empty() ? "" : ", ") + n.get<std::string>();
    d.warn("GPU " + sel + " is slowing its clocks now (" + names +
           "): arms measured like this are flagged throttled; let it settle, or lock clocks "
           "below the power-capped range (nvidia-smi -lgc) where you may");
  }
}

int run_doctor(const std::vector<std::string>& gpus) {
  Doctor d;
  std::cout << "abharness " << kHarnessVersion << " doctor\n";
  fs::path worker;
  try {
    worker = worker_binary();
    d.ok("worker " + worker.string() + " (sha256 " + sha256_file(worker).substr(0, 12) + ")");
  } catch (const std::exception& e) {
    d.bad(e.what());
    return exit_code::kError;
  }
  fs::path inc = plugin_include_dir();
  if (fs::exists(inc / "abharness" / "plugin.h"))
    d.ok("plugin ABI header " + (inc / "abharness" / "plugin.h").string());
  else
    d.bad("plugin ABI header missing under " + inc.string() +
          ": set ABHARNESS_INCLUDE_DIR to the folder holding abharness/plugin.h");
  int major = 0, minor = 0, rev = 0;
  git_libgit2_version(&major, &minor, &rev);
  d.ok("libgit2 " + std::to_string(major) + "." + std::to_string(minor) + "." +
       std::to_string(rev));
  std::string cxx = program_or_empty("c++");
  if (cxx.empty())
    d.warn("no c++ on PATH: recipes that compile with it will fail (apt-get install g++)");
  else
    d.ok("c++ " + cxx);
  std::string nvcc = program_or_empty("nvcc");
  if (nvcc.empty() && fs::exists("/usr/local/cuda/bin/nvcc")) nvcc = "/usr/local/cuda/bin/nvcc";
  if (nvcc.empty())
    d.warn("no nvcc (PATH or /usr/local/cuda/bin): CUDA recipes using ${CUDA_HOME} cannot build");
  else
    d.ok("nvcc " + nvcc);

  const fs::path tmp =
      fs::temp_directory_path() / ("abharness-doctor-" + std::to_string(::getpid()));
  try {
    json host = worker_json(worker, worker_protocol::probe_args(), tmp);
    d.ok("host " + host.value("hostname", "?") + ": " + host.value("cpu_model", "?") + ", " +
         host.value("os", "?"));
  } catch (const std::exception& e) {
    d.bad(std::string("the worker cannot probe this host: ") + e.what());
  }
  for (const auto& g : gpus) check_gpu(d, worker, g, tmp);
  std::error_code ec;
  fs::remove_all(tmp, ec);
  std::cout << (d.problems ? "not ready: fix the FAIL lines above\n" : "ready\n");
  return d.problems ? exit_code::kError : exit_code::kSuccess;
}

}  // namespace

void add_doctor_command(CLI::App& app, int& exit_code) {
  auto gpus = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"0"});
  auto* c = app.add_subcommand("doctor", "check this machine: binaries, toolchains, GPUs, clocks");
  c->add_option("--gpu", *gpus, "GPU index or UUID to check (repeatable)")->capture_default_str();
  c->footer(
      "Example:\n  abharness doctor --gpu 0 --gpu 1\nExit 0 when a CPU sweep can run; "
      "GPU findings are listed with their fix.");
  c->callback([gpus, &exit_code] { exit_code = run_doctor(*gpus); });
}

}  // namespace abh
