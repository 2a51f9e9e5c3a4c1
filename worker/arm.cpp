#include "arm.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "device.hpp"
#include "exit_error.hpp"
#include "l2_flush_method.hpp"
#include "model/plan.hpp"
#include "model/result.hpp"
#include "plugin.hpp"
#include "sampling.hpp"
#include "start_turn.hpp"
#include "stats/statistics.hpp"
#include "system/cpu_set.hpp"
#include "system/file_lock.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/version.hpp"
#include "tactic_cache.hpp"
#include "timer.hpp"

namespace abh::worker {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

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

// The log of an arm's phases, on stdout, and their durations for the result. A phase runs from
// the end of the one before it (the first from the process's start) to its line, which ends with
// "(phase <name> <seconds> s)" so that benches can read every phase of every arm from its log.
class PhaseLog {
 public:
  explicit PhaseLog(Clock::time_point process_start) : start_(process_start), last_(start_) {}
  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Starts a line stamped "[0.123 s] " with the seconds since the process started.
  std::ostream& at() const {
    char b[32];
    std::snprintf(b, sizeof b, "[%.3f s] ", elapsed_s());
    return std::cout << b;
  }
  // Ends phase `name`: logs `what` with the phase's duration and records it.
  void end(const std::string& name, const std::string& what) {
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    phases_.push_back({name, seconds});
    char b[64];
    std::snprintf(b, sizeof b, " (phase %s %.4f s)", name.c_str(), seconds);
    at() << what << b << std::endl;
  }
  const std::vector<ArmPhase>& phases() const { return phases_; }

 private:
  Clock::time_point start_, last_;
  std::vector<ArmPhase> phases_;
};

// The plan's entries for this arm.
struct PlannedArm {
  const Plan& plan;
  const Task& task;
  const Variant& variant;
  const Shape& shape;
  const MeasureSettings& settings;
};

PlannedArm find_arm(const Plan& plan, const ArmRequest& req) {
  const Task* task = plan.find_task(req.shape, req.arm);
  if (!task) throw UsageError("plan " + plan.run_id + " has no arm " + req.shape + "/" + req.arm);
  return {plan, *task, plan.variant(task->variant), plan.shape(task->shape), plan.settings};
}

// Read the plan: what is measured, with which binaries (hashed as they are now, not as planned:
// provenance validation compares the two), under which plan (its nonce and the digest of the
// bytes read, so that the result cannot pass for one of another run), and for a Python plugin
// under which interpreter (as the Python front end describes it).
void record_identity(const PlannedArm& a, const ArmRequest& req, ArmResult& r) {
  r.invocation =
      Invocation{a.plan.run_id,  a.plan.run_nonce, a.shape.id,           a.shape.params, a.task.arm,
                 a.task.variant, a.task.round,     a.plan.plugin_target, a.settings};
  r.plan_sha256 = a.plan.file_sha256;
  r.source = a.variant.source;
  r.worker_sha256 = worker_protocol::worker_digest(req.files);
  r.plugin_sha256 = plugin_digest(req.run_dir, a.variant);
  if (req.front_end)
    r.python = interpreter_from_json(
        parse_json(req.front_end->identity_json, "the Python front end's interpreter identity"),
        "the Python front end's interpreter identity");
}

// The plugin the arm measures: the plan's shared object, or the table of the front end that runs
// the plan's Python plugin. A mismatch is refused: the other front end must run this arm.
std::unique_ptr<Plugin> load_plugin(const PlannedArm& a, const ArmRequest& req) {
  const abh_worker_front_end* fe = req.front_end;
  if (a.variant.is_python() && !fe)
    throw UsageError("the " + a.variant.name +
                     " plugin is a Python plugin: its arms run under the Python front end (" +
                     worker_protocol::kPythonFrontEnd + "), not abharness-worker");
  if (!a.variant.is_python() && fe)
    throw UsageError("the " + a.variant.name + " plugin is not a Python plugin (" +
                     a.variant.plugin + "): its arms run under abharness-worker");
  if (fe) return std::make_unique<Plugin>(fe->plugin, "the Python plugin " + a.variant.plugin);
  return std::make_unique<Plugin>(req.run_dir / a.variant.plugin);
}

// The UUID of the arm's GPU. A plan whose launcher places lanes (Slurm) cannot name it: the lane
// that started this worker names it in CUDA_VISIBLE_DEVICES, once it checked that the node's GPU
// is the planned model.
std::string planned_gpu(const GpuInfo& planned) {
  if (!planned.uuid.empty()) return planned.uuid;
  const char* visible = std::getenv(worker_protocol::kVisibleDevicesEnv);
  if (!visible || std::string(visible).rfind("GPU-", 0) != 0)
    throw UsageError(std::string("the plan leaves the GPU to its launcher, but ") +
                     worker_protocol::kVisibleDevicesEnv +
                     " names no GPU UUID: run arms of this plan through `abharness lane`");
  return visible;
}

// The CPUs of the arm: the plan's, or when the plan leaves the placement to each lane on its node
// (the Slurm launcher), the ones the lane that started this worker chose there.
std::vector<int> planned_cpus(const Plan& plan, const Task& task) {
  if (!launcher_places_lanes(plan.launcher)) return task.cpus;
  const char* cpus = std::getenv(worker_protocol::kArmCpusEnv);
  if (!cpus || !*cpus)
    throw UsageError(std::string("the plan leaves the CPUs to its launcher, but ") +
                     worker_protocol::kArmCpusEnv +
                     " is not set: run arms of this plan through `abharness lane`");
  return parse_cpu_list(cpus, worker_protocol::kArmCpusEnv);
}

// A worker of a local multi-lane plan opens its GPU in its turn (launch.hpp): the turn is the
// flock on a file of the run directory that every lane shares. ABH_DEVICE_OPEN_TURNS=0 lets lanes
// open at will (bench/scaling.sh compares both).
std::optional<FileLock> take_device_open_turn(const PlannedArm& a, const RunDirFs& run) {
  const char* turns = std::getenv(worker_protocol::kDeviceOpenTurnsEnv);
  if (!lanes_take_turns_to_open(a.plan.launcher, a.plan.schedule.gpus) ||
      (turns && std::string(turns) == "0"))
    return std::nullopt;
  return std::optional<FileLock>(std::in_place, run, worker_protocol::kDeviceOpenLock,
                                 FileLock::Wait::yes);
}

// Open the device: the host for a CPU plugin, the plan's GPU for a CUDA plugin.
std::unique_ptr<DeviceSession> open_device(const PlannedArm& a, const RunDirFs& run,
                                           const Plugin& plugin, ArmResult& r) {
  std::unique_ptr<DeviceSession> session;
  if (plugin.is_cuda()) {
    const Device* gpu = gpu_device();
    // A Python plugin is a CUDA plugin unless its manifest says "device": "cpu".
    const std::string fix = a.variant.is_python()
                                ? "a Python plugin whose run() does host work declares "
                                  "\"device\": \"cpu\" in abharness.json; a GPU one needs a "
                                  "worker built where the CUDA toolkit is found"
                                : "rebuild abharness where the CUDA toolkit is found";
    if (!gpu)
      throw ExitError(worker_protocol::kUnsupported,
                      "plugin " + plugin.name() +
                          " is a CUDA plugin but this worker was built without CUDA: " + fix);
    const Environment& planned = a.plan.machine.at(static_cast<size_t>(a.task.gpu));
    if (!planned.gpu)
      throw UsageError("plan machine entry " + std::to_string(a.task.gpu) +
                       " has no GPU but the plugin is a CUDA plugin");
    const std::optional<FileLock> turn = take_device_open_turn(a, run);
    session = gpu->open(planned_gpu(*planned.gpu));
  } else {
    session = cpu_device().open("");
  }
  r.environment = session->environment();
  r.environment.libraries = plugin.library_versions();
  r.measurement.cache_preparation = kWarmCachePreparation;
  if (!a.settings.warm_l2 && session->l2_flush_bytes() > 0) {
    r.measurement.l2_flushed = true;
    r.measurement.l2_flush_bytes = session->l2_flush_bytes();
    r.measurement.cache_preparation = session->cold_cache_preparation();
  }
  return session;
}

// Choose the tactic. One cache per run, keyed by source identity and plugin hash: in an A/A
// comparison both sides then use the tactic tuned once, instead of two tunings that noise may send
// different ways.
void choose_arm_tactic(const PlannedArm& a, const RunDirFs& run, Problem& problem,
                       const ArmWork& work, void* stream, ArmResult& r) {
  TacticContext tac;
  tac.run = &run;
  tac.cache_file = "tactics.json";
  Sha256 key;
  key.field(a.variant.source.digest)
      .field(r.plugin_sha256)
      .field(canonical(to_json(r.environment)))
      .field(canonical(a.shape.params));
  // A Python kernel's best tactic may change with its libraries (a Triton release): they are
  // part of the key.
  if (r.python) key.field(canonical(identity_json(*r.python)));
  tac.cache_key = key.hex();
  TacticChoice tactic =
      choose_tactic(problem, work.timer, work.prepare_only(), stream, a.settings.tactic, tac);
  r.measurement.tactic = tactic.key;
  r.measurement.tactic_choice = tactic.how;
}

// Measure: sample until the stopping rule holds, then read the telemetry again and judge from
// both readings (the first was taken before the warm-up) whether the arm ran throttled.
void measure(const ArmWork& work, const MeasureSettings& s, DeviceSession& device, ArmResult& r) {
  sample_until_stopped(work, s, r.measurement);
  r.telemetry.after = device.telemetry();
  const auto& [throttled, note] = device.judge_throttling(r.telemetry, r.measurement.clock);
  r.telemetry.throttled = throttled;
  r.telemetry.note = note;
}

// Verify the plugin's last output, with the device idle; a wrong one ends the arm without a result.
abh_verify_result verify(Problem& problem, DeviceSession& device, ArmResult& r) {
  device.synchronize();
  bool passed = false;
  abh_verify_result v = problem.verify(&passed);
  r.correctness = Correctness{passed, v.max_rel_error, v.tolerance, v.checked, v.method};
  if (!passed) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "wrong result: max relative error %.3g > tolerance %.3g (%s)",
                  v.max_rel_error, v.tolerance, v.method);
    throw ExitError(worker_protocol::kWrongResult, msg);
  }
  return v;
}

// Where the arm runs (docs/method.md#where-arms-run). First the whole process goes to the plan's
// CPUs, before the plugin and the device start threads of their own (they inherit the set); once
// they have, the measuring thread alone is narrowed to the first of them. Every CPU the measuring
// thread is seen on before a sample is recorded, so provenance can check it stayed there.
class ArmPlacement {
 public:
  explicit ArmPlacement(const std::vector<int>& cpus) { placement_.cpus = cpus; }
  void pin_process() const { pin_this_thread(placement_.cpus); }
  // A worker started ahead reads its plan and loads its plugin while the arm before it measures:
  // it keeps off the CPU that arm's measuring thread is pinned to, where it has others.
  void pin_waiting() const {
    const std::vector<int>& c = placement_.cpus;
    pin_this_thread(c.size() > 1 ? std::vector<int>(c.begin() + 1, c.end()) : c);
  }
  void pin_measuring_thread() {
    pin_this_thread({placement_.cpus.front()});
    placement_.affinity = thread_affinity();
    see();
  }
  void see() { seen_.insert(current_cpu()); }
  Placement result() const {
    Placement p = placement_;
    p.seen.assign(seen_.begin(), seen_.end());
    return p;
  }

 private:
  Placement placement_;
  std::set<int> seen_;
};

// A worker started ahead, while the arm before it still measures: initialises the GPU driver
// (cuInit, NVML: no context, nothing on the device), waits for its turn, which comes when that
// arm's process has ended, and only then moves onto the first of its CPUs and goes on to create
// its context. On the H200 the driver's initialisation done here took 0.03 s and shortened the
// session's opening after the turn from 0.23 s to 0.12 s (docs/measurements.md); creating the
// context before the turn moved other arms' kernel times, so that waits (docs/method.md).
void wait_for_turn(const Plugin& plugin, StartTurn& turn, const ArmPlacement& placement,
                   PhaseLog& log) {
  if (plugin.is_cuda() && gpu_device()) {
    gpu_device()->prepare();
    log.end("driver", "GPU driver initialised (no context yet)");
  }
  const double waited = turn.wait();
  log.end("turn", "turn to open the device, after waiting " + std::to_string(waited) + " s");
  placement.pin_process();
}

// Everything an arm holds while it measures, released in reverse order of making (the problem
// before the plugin whose code destroys it).
struct ArmParts {
  std::unique_ptr<Plugin> plugin;
  std::unique_ptr<DeviceSession> device;
  std::unique_ptr<Problem> problem;
  std::unique_ptr<Timer> timer;
  std::unique_ptr<SampleClock> clock;
  void release() {
    clock.reset();
    timer.reset();
    problem.reset();
    device.reset();
    plugin.reset();
  }
};

// Read the plan, load the plugin and, when started ahead, wait for the turn to open the device.
std::unique_ptr<Plugin> read_plan_and_load(const PlannedArm& a, const ArmRequest& req,
                                           ArmPlacement& placement, StartTurn& turn, PhaseLog& log,
                                           ArmResult& r) {
  record_identity(a, req, r);
  if (turn.ahead())
    placement.pin_waiting();
  else
    placement.pin_process();
  log.end("plan", "plan read, binaries hashed, pinned to CPU(s) " +
                      format_cpu_list(placement.result().cpus) +
                      (turn.ahead() ? " (started ahead: off the first until its turn)" : ""));
  std::unique_ptr<Plugin> plugin = load_plugin(a, req);
  log.end("plugin", "plugin loaded");
  r.measurement.timer = resolve_timer(a.settings.timer, plugin->is_cuda());
  std::cout << "worker " << ::getpid() << ": " << a.shape.id << "/" << a.task.arm << " ("
            << a.task.variant << ") plugin " << plugin->name() << ", timer " << r.measurement.timer
            << std::endl;
  // Started ahead: the GPU is the arm before's until its process has ended; nothing of this arm
  // goes onto the device before then (docs/method.md, "Starting the next arm ahead").
  if (turn.ahead()) wait_for_turn(*plugin, turn, placement, log);
  return plugin;
}

// Open the device, let the front end bind its frameworks to the session's stream, create the
// problem and the timer, and choose the tactic.
void set_up(const PlannedArm& a, const ArmRequest& req, const RunDirFs& run, ArmParts& parts,
            PhaseLog& log, ArmResult& r) {
  parts.device = open_device(a, run, *parts.plugin, r);
  log.end("device", "device session open, environment probed, caches: " +
                        r.measurement.cache_preparation);
  const TimerContext tctx = parts.device->timer_context();
  if (req.front_end && req.front_end->session_opened) {
    req.front_end->session_opened(tctx.stream, tctx.device);
    log.end("frameworks", "the front end's frameworks use the session's stream");
  }
  parts.problem = parts.plugin->create(a.shape.params);
  r.measurement.flops = parts.problem->flops();
  r.measurement.min_bytes = parts.problem->min_bytes();
  log.end("problem", "problem created");
  parts.timer = make_timer(r.measurement.timer, tctx);
  log.end("timer", "timer ready");
}

}  // namespace

void measure_arm(const ArmRequest& req, Clock::time_point process_start) {
  PhaseLog log(process_start);
  ArmResult r;
  r.started_at = now_utc();
  r.pid = static_cast<int>(::getpid());
  r.schema_version = kResultSchemaVersion;
  r.harness_version = kHarnessVersion;
  log.end("start", "engine started");

  const RunDirFs run(req.run_dir);
  const Plan plan = load_plan(req.run_dir);
  const PlannedArm a = find_arm(plan, req);
  ArmPlacement placement(planned_cpus(plan, a.task));
  StartTurn turn(req.ahead);
  ArmParts parts;
  parts.plugin = read_plan_and_load(a, req, placement, turn, log, r);
  set_up(a, req, run, parts, log, r);
  const TimerContext tctx = parts.device->timer_context();
  placement.pin_measuring_thread();
  Problem& problem = *parts.problem;
  DeviceSession& device = *parts.device;
  ArmWork work{*parts.timer, [&] { problem.enqueue(tctx.stream); }, [&] { placement.see(); }};
  if (r.measurement.l2_flushed)
    work.prepare = [&] {
      placement.see();
      device.flush_l2();
    };
  choose_arm_tactic(a, run, problem, work, tctx.stream, r);
  log.end("tactic", "tactic " + r.measurement.tactic + " (" + r.measurement.tactic_choice + ")");

  // Warm up.
  r.telemetry.before = device.telemetry();
  r.measurement.waited_s = turn.waited_s();
  r.measurement.ready_s = log.elapsed_s() - turn.waited_s();
  std::cout << "ready to measure " << r.measurement.ready_s << " s after start"
            << (turn.ahead() ? " (not counting " + std::to_string(turn.waited_s()) +
                                   " s waiting for its turn)"
                             : std::string())
            << std::endl;
  warm_up(work, a.settings, r.measurement);
  log.end("warm-up", std::to_string(r.measurement.warmup_iterations) + " warm-up iterations");

  // The clock probe is made after the warm-up, right before the samples it clocks.
  parts.clock = device.sample_clock(kMaxBatch);
  work.clock = parts.clock.get();
  measure(work, a.settings, device, r);
  const std::vector<double>& samples = r.measurement.samples_ns;
  std::ostringstream sampled;
  sampled << samples.size() << " samples, median " << median(samples) << " ns, "
          << r.measurement.stop_reason;
  log.end("sampling", sampled.str());

  const abh_verify_result v = verify(problem, device, r);
  std::ostringstream verified;
  verified << "verified: max relative error " << v.max_rel_error << " <= " << v.tolerance << " ("
           << v.method << ")";
  log.end("verify", verified.str());

  r.placement = placement.result();
  r.measurement.phases = log.phases();
  r.finished_at = now_utc();
  if (req.warmup) {
    log.at() << "warm-up done: median " << median(r.measurement.samples_ns)
             << " ns, no result written" << std::endl;
    return;
  }
  write_result(req.run_dir, result_rel(a.task), r);
  log.end("write", "result written");
  parts.release();
  log.end("release", "clock probe, timer, problem, device session and plugin released");
}

}  // namespace abh::worker
