#include "arm.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>

#include "arm_placement.hpp"
#include "baseline_reference.hpp"
#include "cache_preparation.hpp"
#include "device.hpp"
#include "exit_error.hpp"
#include "model/arm_plan.hpp"
#include "model/plan.hpp"
#include "model/result.hpp"
#include "model/timing.hpp"
#include "plugin.hpp"
#include "sampling.hpp"
#include "start_turn.hpp"
#include "stats/statistics.hpp"
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

// The log of an arm's phases, on stdout, and the same phases with their seconds for the result
// (`measurement.phases`): where an arm's time goes, readable without its log.
class PhaseLog {
 public:
  explicit PhaseLog(Clock::time_point process_start) : start_(process_start) {}
  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Starts a line stamped "[0.123 s] " with the seconds since the process started.
  std::ostream& at() const {
    char b[32];
    std::snprintf(b, sizeof b, "[%.3f s] ", elapsed_s());
    return std::cout << b;
  }
  // Ends the phase `name` (it began where the last one ended) and starts its log line.
  std::ostream& phase(const std::string& name) {
    const double t = elapsed_s();
    phases_.push_back({name, t - last_});
    last_ = t;
    return at();
  }
  const std::vector<ArmPhase>& phases() const { return phases_; }

 private:
  Clock::time_point start_;
  std::vector<ArmPhase> phases_;
  double last_ = 0;
};

// The plan's entries for this arm.
struct PlannedArm {
  const Plan& plan;
  const Task& task;
  const Variant& variant;
  const Shape shape;  // the plan's, with the variant's run settings merged in (arm_shape)
  const MeasureSettings settings;  // the plan's, with the shape's one timing (model/timing.hpp)
};

// The plan as the arm needs it: its own entries only, when the orchestrator passed the digest of
// the plan it checked whole (model/arm_plan.hpp); else the whole plan, read and checked here.
Plan read_arm_plan(const ArmRequest& req, PhaseLog& log) {
  const auto start = Clock::now();
  const char* checked = std::getenv(worker_protocol::kPlanDigestEnv);
  std::optional<Plan> plan;
  std::string how = std::string("whole (") + worker_protocol::kPlanDigestEnv + " not set)";
  if (checked && *checked) {
    ArmPlanRead r = load_arm_plan(req.run_dir, req.shape, req.arm, checked);
    plan = std::move(r.plan);
    how = plan ? "the arm's entries of " + std::to_string(r.bytes) +
                     " bytes, digest as abharness checked it"
               : "whole, because " + r.why_not;
  }
  if (!plan) plan = load_plan(req.run_dir);
  const std::chrono::duration<double> took = Clock::now() - start;
  log.phase("plan") << "plan read in " << took.count() << " s: " << how << std::endl;
  return std::move(*plan);
}

PlannedArm find_arm(const Plan& plan, const ArmRequest& req) {
  const Task* task = plan.find_task(req.shape, req.arm);
  if (!task) throw UsageError("plan " + plan.run_id + " has no arm " + req.shape + "/" + req.arm);
  const Shape& shape = plan.shape(task->shape);
  const Variant& variant = plan.variant(task->variant);
  return {plan, *task, variant, arm_shape(shape, variant),
          arm_settings(plan.settings, shape, variant)};
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
    const std::optional<FileLock> turn = take_device_open_turn(a.plan, run);
    session = gpu->open(planned_gpu(*planned.gpu));
  } else {
    session = cpu_device().open("");
  }
  r.environment = session->environment();
  r.environment.libraries = plugin.library_versions();
  return session;
}

// How the caches are prepared before each timed iteration (cache_preparation.hpp), and the buffer
// sets that takes, made here: a refusal (the graph timing of a problem without sets, sets the
// device cannot hold) ends the arm as unsupported, naming the shape and the fix.
CachePlan prepare_caches(const PlannedArm& a, Problem& problem, DeviceSession& device,
                         ArmResult& r) {
  CacheFacts f;
  f.timing = a.settings.timing;
  f.warm_l2 = a.settings.warm_l2;
  f.flush_bytes = device.l2_flush_bytes();
  f.flush_method = device.l2_flush_method();
  f.offers_sets = problem.has(ABH_CAP_BUFFER_SETS);
  if (f.offers_sets) f.set_bytes = problem.buffer_set_bytes();
  f.l2_bytes = r.environment.gpu ? static_cast<double>(r.environment.gpu->l2_bytes) : 0;
  f.shape = a.shape.id;
  f.plugin = problem.plugin();
  CachePlan plan;
  try {
    if (f.offers_sets && !f.warm_l2 && f.flush_bytes > 0) f.free_bytes = device.free_memory_bytes();
    plan = plan_cache(f);
  } catch (const UsageError& e) {
    throw ExitError(worker_protocol::kUnsupported, e.what());
  }
  if (plan.sets > 1) problem.make_buffer_sets(plan.sets);
  r.measurement.cache_preparation = plan.description;
  r.measurement.l2_flushed = plan.kind == CachePlan::Kind::flush;
  if (r.measurement.l2_flushed) r.measurement.l2_flush_bytes = device.l2_flush_bytes();
  return plan;
}

// The graph timing needs a problem that declares it can be captured: refused before anything is
// timed otherwise, naming the plugin and what to add.
void check_timing_supported(const PlannedArm& a, Problem& problem) {
  if (a.settings.timing == kTimingGraph && !problem.has(ABH_CAP_CAPTURABLE))
    throw ExitError(worker_protocol::kUnsupported,
                    "the " + problem.plugin() +
                        " plugin does not declare that its problem can be captured into a CUDA "
                        "graph, so the graph timing is refused: a C++ plugin implements plugin "
                        "ABI 2 and sets ABH_CAP_CAPTURABLE in capabilities(); a Python problem "
                        "sets `capturable = True` (docs/python.md)");
}

// Cycles an arm's iterations through its buffer sets: before each sample (kernel and launch
// timings) the next set is selected, so the one a sample uses was last touched S - 1 sets ago.
class SetRotation {
 public:
  SetRotation(Problem& problem, int sets) : problem_(problem), sets_(sets) {}
  void next() {
    problem_.use_buffer_set(next_);
    next_ = (next_ + 1) % sets_;
  }

 private:
  Problem& problem_;
  int sets_;
  int next_ = 0;
};

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
      .field(canonical(a.shape.params))
      .field(a.settings.timing);
  // A Python kernel's best tactic may change with its libraries (a Triton release): they are
  // part of the key.
  if (r.python) key.field(canonical(identity_json(*r.python)));
  tac.cache_key = key.hex();
  TacticChoice tactic =
      choose_tactic(problem, work.timer, work.prepare_only(), stream, a.settings.tactic, tac);
  r.measurement.tactic = tactic.key;
  r.measurement.tactic_choice = tactic.how;
}

// The candidate's reference, logged: which baseline arms it came from, and any that could not be
// read.
BaselineReference logged_reference(const PlannedArm& a, const RunDirFs& run,
                                   const std::string& timer, PhaseLog& log) {
  const BaselineReference ref = baseline_reference(a.plan, a.task, run, timer);
  for (const std::string& why : ref.unreadable)
    log.at() << "no reference from " << why << std::endl;
  if (ref.arms > 0)
    log.at() << "reference: the baseline's " << ref.arms << " arm(s) of this shape, median "
             << ref.ns << " ns" << (ref.mhz > 0 ? " at " + std::to_string(ref.mhz) + " MHz" : "")
             << std::endl;
  return ref;
}

// Measure: sample until the stopping rule holds, judged against what the run decides with (its
// noise band and confidence) and, for a candidate arm, against its baseline's arms so far; then
// read the telemetry again and judge from both readings (the first was taken before the warm-up)
// whether the arm ran throttled. A warm-up arm stops after kWarmUpArmWallS of sampling at the
// latest (kWarmUpArmWallGpuS on a GPU).
JudgingEffort measure(const ArmWork& work, const PlannedArm& a, bool warm_up_arm, bool on_gpu,
                      const BaselineReference& reference, DeviceSession& device, ArmResult& r) {
  const StatsOptions& decision = a.plan.schedule.decision;
  const double warm_up_wall_s = on_gpu ? kWarmUpArmWallGpuS : kWarmUpArmWallS;
  StoppingGoal goal{decision.noise_band, decision.confidence, warm_up_arm ? warm_up_wall_s : 0};
  goal.reference_ns = reference.ns;
  goal.reference_mhz = reference.mhz;
  const JudgingEffort effort = sample_until_stopped(work, a.settings, goal, r.measurement);
  r.telemetry.after = device.telemetry();
  const auto& [throttled, note] = device.judge_throttling(r.telemetry, r.measurement.clock);
  r.telemetry.throttled = throttled;
  r.telemetry.note = note;
  return effort;
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
    log.at() << "GPU driver initialised (no context yet)" << std::endl;
  }
  const double waited = turn.wait();
  log.phase("waiting for the turn")
      << "turn to open the device, after waiting " << waited << " s" << std::endl;
  placement.pin_process();
}

// What an arm leaves for the end of its process, once its owners are gone.
struct Measured {
  bool gpu_context = false;  // the plugin ran in this process's CUDA context
  std::vector<int> cpus;     // the arm's CPUs, the first its measuring one
};

// The arm's phases, up to its result; every owner (plugin, device session, problem, timer) is
// released when this returns.
Measured measure_and_write(const ArmRequest& req, StartTurn& turn, PhaseLog& log) {
  ArmResult r;
  r.started_at = now_utc();
  r.pid = static_cast<int>(::getpid());
  r.schema_version = kResultSchemaVersion;
  r.harness_version = kHarnessVersion;

  const RunDirFs run(req.run_dir);
  const Plan plan = read_arm_plan(req, log);
  const PlannedArm a = find_arm(plan, req);
  record_identity(a, req, r);
  const std::vector<int> cpus = planned_cpus(plan, a.task);
  ArmPlacement placement(cpus);
  if (turn.ahead())
    placement.pin_waiting();
  else
    placement.pin_process();
  log.phase("identity") << "plan read, binaries hashed, pinned to CPU(s) " << format_cpu_list(cpus)
                        << (turn.ahead() ? " (started ahead: off the first until its turn)" : "")
                        << std::endl;

  const std::unique_ptr<Plugin> loaded = load_plugin(a, req);
  const Plugin& plugin = *loaded;
  log.phase("plugin") << "plugin loaded" << std::endl;
  // A Python plugin's framework (PyTorch's allocator, say) still points into the context once it
  // is destroyed; the Python front end exits at once (os._exit) after the engine returns, so
  // nothing of it runs again.
  const Measured measured{plugin.is_cuda(), cpus};
  r.measurement.timer = resolve_timer(a.settings.timer, plugin.is_cuda(), a.settings.timing);
  std::cout << "worker " << ::getpid() << ": " << a.shape.id << "/" << a.task.arm << " ("
            << a.task.variant << ") plugin " << plugin.name() << ", timing " << a.settings.timing
            << ", timer " << r.measurement.timer << std::endl;

  // Started ahead: the GPU is the arm before's until its process has ended; nothing of this arm
  // goes onto the device before then (docs/method.md, "Starting the next arm ahead").
  if (turn.ahead()) wait_for_turn(plugin, turn, placement, log);
  const std::unique_ptr<DeviceSession> device = open_device(a, run, plugin, r);
  log.phase("device") << "device session open, environment probed" << std::endl;
  const TimerContext tctx = device->timer_context();
  if (req.front_end && req.front_end->session_opened)
    req.front_end->session_opened(tctx.stream, tctx.device);

  const std::unique_ptr<Problem> problem = plugin.create(a.shape.params);
  r.measurement.flops = problem->flops();
  r.measurement.min_bytes = problem->min_bytes();
  log.phase("problem") << "problem created" << std::endl;
  check_timing_supported(a, *problem);
  const CachePlan cache = prepare_caches(a, *problem, *device, r);
  log.phase("caches") << "caches: " << cache.description << std::endl;
  TimerContext timed = tctx;
  timed.problem = problem.get();
  timed.buffer_sets = cache.sets;
  const std::unique_ptr<Timer> timer = make_timer(r.measurement.timer, timed);
  log.phase("timer") << "timer ready" << std::endl;
  placement.pin_measuring_thread();
  ArmWork work{*timer, [&] { problem->enqueue(tctx.stream); }, [&] { placement.see(); }};
  SetRotation rotation(*problem, cache.sets);
  if (cache.kind == CachePlan::Kind::flush)
    work.prepare = [&] {
      placement.see();
      device->flush_l2();
    };
  // The graph timer cycles the sets inside its graph; the others take the next before a sample.
  if (cache.kind == CachePlan::Kind::rotation && a.settings.timing != kTimingGraph)
    work.prepare = [&] {
      placement.see();
      rotation.next();
    };

  choose_arm_tactic(a, run, *problem, work, tctx.stream, r);
  log.phase("tactic") << "tactic " << r.measurement.tactic << " (" << r.measurement.tactic_choice
                      << ")" << std::endl;

  // Warm up.
  r.telemetry.before = device->telemetry();
  r.measurement.waited_s = turn.waited_s();
  r.measurement.ready_s = log.elapsed_s() - turn.waited_s();
  std::cout << "ready to measure " << r.measurement.ready_s << " s after start"
            << (turn.ahead() ? " (not counting " + std::to_string(turn.waited_s()) +
                                   " s waiting for its turn)"
                             : std::string())
            << std::endl;
  warm_up(work, a.settings, r.measurement);
  log.phase("warm-up") << "warmed up: " << r.measurement.warmup_iterations << " iterations"
                       << std::endl;

  // The clock probe is made after the warm-up, right before the samples it clocks.
  const std::unique_ptr<SampleClock> clock = device->sample_clock(kMaxBatch);
  work.clock = clock.get();
  const BaselineReference reference =
      req.warmup ? BaselineReference{} : logged_reference(a, run, r.measurement.timer, log);
  const JudgingEffort judged =
      measure(work, a, req.warmup, plugin.is_cuda(), reference, *device, r);
  const std::vector<double>& samples = r.measurement.samples_ns;
  log.phase("sampling") << samples.size() << " samples, median " << median(samples) << " ns, "
                        << r.measurement.stop_reason << " (judged in " << judged.checks
                        << " checks, " << judged.seconds << " s)" << std::endl;

  const abh_verify_result v = verify(*problem, *device, r);
  log.phase("verify") << "verified: max relative error " << v.max_rel_error << " <= " << v.tolerance
                      << " (" << v.method << ")" << std::endl;

  r.placement = placement.result();
  r.measurement.phases = log.phases();
  r.finished_at = now_utc();
  if (req.warmup) {
    log.at() << "warm-up done: median " << median(r.measurement.samples_ns)
             << " ns, no result written" << std::endl;
    return measured;
  }
  write_result(req.run_dir, result_rel(a.task), r);
  log.at() << "result written" << std::endl;
  return measured;
}

// Destroys the arm's CUDA context and tells the orchestrator, which gives the next arm its turn
// without waiting for this process to exit (worker_protocol::kReleased). The process first leaves
// the measuring CPU, which the next arm takes. On the H200 a reset took 0.068-0.073 s and the exit
// after it 0.039-0.055 s, where an exit with the context took 0.101-0.117 s to be reaped
// (docs/measurements.md). A release that fails or leaves a context is logged, and the next arm
// waits for the exit as it would without it.
void release_gpu(const Measured& m, const StartTurn& turn, const PhaseLog& log) {
  std::string why;
  if (!gpu_device() || !gpu_device()->release(&why)) {
    log.at() << "GPU not released early (" << why << "): the next arm waits for this process to end"
             << std::endl;
    return;
  }
  ArmPlacement(m.cpus).pin_waiting();
  turn.say_released();
  log.at() << "GPU released: no CUDA context left in this process" << std::endl;
}

}  // namespace

void measure_arm(const ArmRequest& req, Clock::time_point process_start) {
  PhaseLog log(process_start);
  StartTurn turn(req.ahead);
  const Measured m = measure_and_write(req, turn, log);
  log.at() << "torn down: timer, problem, device session and plugin released" << std::endl;
  if (turn.ahead() && m.gpu_context) release_gpu(m, turn, log);
}

}  // namespace abh::worker
