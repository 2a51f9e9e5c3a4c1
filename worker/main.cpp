// abharness-worker: measures one arm of one shape in a process of its own, then writes
// results/<shape>/<arm>.json atomically. Everything it measures is read from plan.json; it takes
// no measurement setting from its command line, so a result cannot disagree with its plan.
//
// Exit codes: 0 measured and verified; 2 bad invocation or plan; 3 plugin or runtime failure;
// 4 the output was wrong (no result is written: a wrong result is never a speedup);
// 5 the request is unsupported on this machine.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "system/error.hpp"
#include "model/plan.hpp"
#include "plugin.hpp"
#include "model/result.hpp"
#include "sampling.hpp"
#include "stats/statistics.hpp"
#include "system/sha256.hpp"
#include "tactic_cache.hpp"
#include "timer.hpp"
#include "system/version.hpp"
#ifdef ABH_WITH_CUDA
#include "gpu/clock_probe.hpp"
#include "gpu/gpu_session.hpp"
#endif

namespace fs = std::filesystem;
using namespace abh;
using namespace abh::worker;

namespace {

enum Exit { kOk = 0, kUsage = 2, kRuntime = 3, kWrong = 4, kUnsupported = 5 };

std::string now_utc() {
  auto t = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(t);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(ms));
  return buf;
}

struct ExitError : Error {
  ExitError(int code, const std::string& what) : Error(what), code(code) {}
  int code;
};

std::string resolve_timer(const std::string& requested, bool cuda) {
  if (requested == "auto") return cuda ? "cupti" : "steady";
  if (cuda && requested == "steady")
    throw ExitError(kUsage,
                    "timer 'steady' cannot time an asynchronous GPU plugin: use cupti "
                    "(default) or events");
  if (!cuda && requested != "steady")
    throw ExitError(kUsage, "timer '" + requested +
                                "' times GPU kernels but this plugin runs "
                                "on the CPU: use steady (or auto)");
  return requested;
}

int measure_arm(const fs::path& run_dir, const std::string& shape_id, const std::string& arm,
                std::chrono::steady_clock::time_point process_start) {
  // Seconds since the process started, on the log lines that mark the phases of an arm.
  auto at = [&] {
    char b[32];
    std::snprintf(
        b, sizeof b, "[%.3f s] ",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count());
    return std::string(b);
  };
  ArmResult r;
  r.started_at = now_utc();
  r.pid = static_cast<int>(::getpid());
  r.schema_version = kResultSchemaVersion;
  r.harness_version = kHarnessVersion;

  const Plan plan = load_plan(run_dir);
  const Task* task = plan.find_task(shape_id, arm);
  if (!task) throw ExitError(kUsage, "plan " + plan.run_id + " has no arm " + shape_id + "/" + arm);
  const Variant& variant = plan.variant(task->variant);
  const Shape& shape = plan.shape(task->shape);
  const MeasureSettings& s = plan.settings;
  r.invocation = Invocation{plan.run_id,   shape.id,    shape.params,       task->arm,
                            task->variant, task->round, plan.plugin_target, s};
  r.source = variant.source;
  r.worker_sha256 = sha256_file("/proc/self/exe");
  const fs::path plugin_path = run_dir / variant.plugin;
  r.plugin_sha256 = sha256_file(plugin_path);

  std::cout << at() << "plan read, binaries hashed" << std::endl;
  Plugin plugin(plugin_path);
  std::cout << at() << "plugin loaded" << std::endl;
  const bool cuda = plugin.is_cuda();
  r.measurement.timer = resolve_timer(s.timer, cuda);
  std::cout << "worker " << ::getpid() << ": " << shape.id << "/" << arm << " (" << task->variant
            << ") plugin " << plugin.name() << ", timer " << r.measurement.timer << std::endl;

  TimerContext tctx;
  std::function<void()> flush = [] {};
  std::function<TelemetrySnapshot()> telemetry = [] {
    TelemetrySnapshot t;
    t.unavailable_reason = "CPU plugin: no GPU telemetry";
    return t;
  };
#ifdef ABH_WITH_CUDA
  std::unique_ptr<gpu::GpuSession> session;
#endif
  if (cuda) {
#ifdef ABH_WITH_CUDA
    const Environment& planned = plan.machine.at(static_cast<size_t>(task->gpu));
    if (!planned.gpu)
      throw ExitError(kUsage, "plan machine entry " + std::to_string(task->gpu) +
                                  " has no GPU but the plugin is a CUDA plugin");
    std::string why;
    if (!gpu::cuda_available(&why)) throw ExitError(kUnsupported, "no usable GPU: " + why);
    session = std::make_unique<gpu::GpuSession>(planned.gpu->uuid);
    r.environment = gpu::probe(planned.gpu->uuid);
    tctx.stream = session->stream();
    tctx.device = session->device();
    if (!s.warm_l2) {
      flush = [&] { session->flush_l2(); };
      r.measurement.l2_flushed = true;
      r.measurement.l2_flush_bytes = session->flush_bytes();
    }
    std::string uuid = planned.gpu->uuid;
    telemetry = [uuid] { return gpu::read_telemetry(uuid); };
#else
    throw ExitError(kUnsupported, "plugin " + plugin.name() +
                                      " is a CUDA plugin but this worker was built without CUDA: "
                                      "rebuild abharness where the CUDA toolkit is found");
#endif
  } else {
    r.environment = probe_host();
  }
  r.environment.libraries = plugin.library_versions();
  std::cout << at() << "device session open, environment probed" << std::endl;

  auto problem = plugin.create(shape.params);
  r.measurement.flops = problem->flops();
  r.measurement.min_bytes = problem->min_bytes();
  std::cout << at() << "problem created" << std::endl;
  auto timer = make_timer(r.measurement.timer, tctx);
  std::cout << at() << "timer ready" << std::endl;
  ArmWork work{*timer, [&] { problem->enqueue(tctx.stream); }, flush};

  TacticContext tac;
  // One cache per run, keyed by source identity and plugin hash: in an A/A comparison both sides
  // then use the tactic tuned once, instead of two tunings that noise may send different ways.
  tac.cache_file = run_dir / "tactics.json";
  tac.cache_key = Sha256()
                      .field(variant.source.digest)
                      .field(r.plugin_sha256)
                      .field(canonical(to_json(r.environment)))
                      .field(canonical(shape.params))
                      .hex();
  TacticChoice tactic =
      choose_tactic(*problem, *timer, work.prepare_only(), tctx.stream, s.tactic, tac);
  r.measurement.tactic = tactic.key;
  r.measurement.tactic_choice = tactic.how;
  std::cout << at() << "tactic " << tactic.key << " (" << tactic.how << ")" << std::endl;

  r.telemetry.before = telemetry();
  r.measurement.ready_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count();
  std::cout << "ready to measure " << r.measurement.ready_s << " s after start" << std::endl;
  warm_up(work, s, r.measurement);
#ifdef ABH_WITH_CUDA
  // Every GPU sample is clocked (worker/clock_guard.hpp says why).
  std::unique_ptr<gpu::ClockProbe> probe;
  if (cuda) {
    probe = std::make_unique<gpu::ClockProbe>(tctx.device, tctx.stream, 1024);
    work.clock = probe.get();
  }
#endif
  sample_until_stopped(work, s, r.measurement);
  const std::vector<double>& samples = r.measurement.samples_ns;
  r.telemetry.after = telemetry();
#ifdef ABH_WITH_CUDA
  if (cuda) {
    const auto& [throttled, note] = gpu::judge_throttling(r.telemetry, r.measurement.clock);
    r.telemetry.throttled = throttled;
    r.telemetry.note = note;
  }
#endif

  std::cout << at() << samples.size() << " samples, median " << median(samples) << " ns, "
            << r.measurement.stop_reason << std::endl;

#ifdef ABH_WITH_CUDA
  if (session) session->synchronize();
#endif
  bool passed = false;
  abh_verify_result v = problem->verify(&passed);
  r.correctness = Correctness{passed, v.max_rel_error, v.tolerance, v.checked, v.method};
  if (!passed) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "wrong result: max relative error %.3g > tolerance %.3g (%s)",
                  v.max_rel_error, v.tolerance, v.method);
    throw ExitError(kWrong, msg);
  }
  std::cout << at() << "verified: max relative error " << v.max_rel_error << " <= " << v.tolerance
            << " (" << v.method << ")" << std::endl;
  r.finished_at = now_utc();
  write_result(result_path(run_dir, *task), r);
  std::cout << at() << "result written" << std::endl;
  return kOk;
}

int probe(const std::string& gpu_selector) {
  Environment e;
  if (gpu_selector.empty()) {
    e = probe_host();
  } else {
#ifdef ABH_WITH_CUDA
    std::string why;
    if (!gpu::cuda_available(&why)) throw ExitError(kUnsupported, "no usable GPU: " + why);
    e = gpu::probe(gpu_selector);
#else
    throw ExitError(kUnsupported,
                    "this worker was built without CUDA: cannot probe GPU " + gpu_selector);
#endif
  }
  std::cout << to_json(e).dump(2) << std::endl;
  return kOk;
}

// What a built plugin is, without running it: the orchestrator records this in the plan.
int describe(const fs::path& plugin_path) {
  Plugin plugin(plugin_path);
  json j{{"name", plugin.name()},
         {"abi_version", plugin.table().abi_version},
         {"device", plugin.is_cuda() ? "cuda" : "cpu"},
         {"libraries", plugin.library_versions()}};
  std::cout << j.dump(2) << std::endl;
  return kOk;
}

// Telemetry of one GPU right now, for `abharness doctor`.
int telemetry_now(const std::string& gpu_selector) {
#ifdef ABH_WITH_CUDA
  std::string why;
  if (!gpu::cuda_available(&why)) throw ExitError(kUnsupported, "no usable GPU: " + why);
  Environment e = gpu::probe(gpu_selector);
  TelemetrySnapshot t = gpu::read_telemetry(e.gpu->uuid);
  json j = to_json(t);
  j["throttled"] = gpu::is_throttled(t);
  std::cout << j.dump(2) << std::endl;
  return kOk;
#else
  throw ExitError(kUnsupported,
                  "this worker was built without CUDA: no telemetry for GPU " + gpu_selector);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const auto process_start = std::chrono::steady_clock::now();
  CLI::App app{"abharness-worker: measures one arm in a process of its own (started by abharness)"};
  app.require_subcommand(1);
  std::string run_dir, shape, arm, gpu;
  auto* run = app.add_subcommand("run", "measure one arm of a planned run");
  run->add_option("--run-dir", run_dir, "run directory holding plan.json")->required();
  run->add_option("--shape", shape, "shape id from the plan")->required();
  run->add_option("--arm", arm, "arm name from the plan (A1, B, A2, ...)")->required();
  auto* pr = app.add_subcommand("probe", "print this machine's environment as JSON");
  pr->add_option("--gpu", gpu, "GPU index or UUID (omit for a CPU-only probe)");
  std::string plugin_path;
  auto* de = app.add_subcommand("describe", "print a plugin's name, device and library versions");
  de->add_option("--plugin", plugin_path, "path of the plugin shared object")->required();
  std::string tgpu = "0";
  auto* te = app.add_subcommand("telemetry", "print one GPU's clocks, power and throttling now");
  te->add_option("--gpu", tgpu, "GPU index or UUID")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  // Started by an orchestrator: die with it. An orphaned worker that finished after the
  // orchestrator was killed would write a result that a resume did not plan for.
  if (const char* parent = std::getenv("ABH_PARENT_PID")) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != std::atoi(parent)) return kRuntime;
  }
  try {
    if (*run) return measure_arm(run_dir, shape, arm, process_start);
    if (*de) return describe(plugin_path);
    if (*te) return telemetry_now(tgpu);
    return probe(gpu);
  } catch (const ExitError& e) {
    std::cerr << "abharness-worker: error: " << e.what() << std::endl;
    return e.code;
  } catch (const PluginError& e) {
    std::cerr << "abharness-worker: error: " << e.what() << std::endl;
    return e.status == ABH_ERR_UNSUPPORTED    ? kUnsupported
           : e.status == ABH_ERR_WRONG_RESULT ? kWrong
                                              : kRuntime;
  } catch (const UsageError& e) {
    std::cerr << "abharness-worker: error: " << e.what() << std::endl;
    return kUsage;
  } catch (const std::exception& e) {
    std::cerr << "abharness-worker: error: " << e.what() << std::endl;
    return kRuntime;
  }
}
