#include "sweep.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// The last lines of a worker's log, read without following links and at most its last 1 MiB.
std::vector<std::string> last_lines(const RunDirFs& run, const fs::path& rel, size_t max_lines) {
  std::string text;
  try {
    UniqueFd fd = run.open_read(rel);
    const off_t size = ::lseek(fd.get(), 0, SEEK_END);
    const off_t from = size > (1 << 20) ? size - (1 << 20) : 0;
    text.resize(static_cast<size_t>(size - from));
    const ssize_t n = ::pread(fd.get(), text.data(), text.size(), from);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  } catch (const std::exception& e) {
    return {std::string("(log unreadable: ") + e.what() + ")"};
  }
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
    if (lines.size() > max_lines) lines.erase(lines.begin());
  }
  return lines;
}

std::string tail_of(const RunDirFs& run, const fs::path& rel, size_t max_lines) {
  std::string out;
  for (const auto& l : last_lines(run, rel, max_lines)) out += l + "\n";
  return out;
}

// The last error line is the worker's own account of what went wrong.
std::string worker_error_line(const RunDirFs& run, const fs::path& err) {
  std::string found;
  for (const auto& l : last_lines(run, err, 200))
    if (auto message = worker_protocol::parse_error_line(l)) found = *message;
  return printable(found);
}

std::string fmt_seconds(double s) {
  char b[32];
  if (s < 90)
    std::snprintf(b, sizeof b, "%.0f s", s);
  else
    std::snprintf(b, sizeof b, "%dm%02ds", int(s) / 60, int(s) % 60);
  return b;
}

class Progress {
 public:
  Progress(int total, int lanes, const SweepOptions& opt)
      : total_(total), lanes_(lanes), opt_(opt), start_(std::chrono::steady_clock::now()) {}

  void finished(const Task& t, const ExitStatus& st, bool ok) {
    std::lock_guard<std::mutex> g(m_);
    ++done_;
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double eta = done_ ? elapsed / done_ * (total_ - done_) : 0;
    if (opt_.quiet) return;
    char line[512];
    std::snprintf(line, sizeof line, "[%*d/%d] %s/%s %s %.1f s | elapsed %s, ETA %s",
                  int(std::to_string(total_).size()), done_, total_, t.shape.c_str(), t.arm.c_str(),
                  ok ? "ok" : "FAILED", st.wall_s, fmt_seconds(elapsed).c_str(),
                  fmt_seconds(eta / lanes_).c_str());
    if (opt_.tty && ok)
      std::cerr << "\r\033[K" << line << std::flush;
    else
      std::cerr << (opt_.tty ? "\r\033[K" : "") << line << "\n";
  }
  void close() {
    if (opt_.tty && !opt_.quiet) std::cerr << "\n";
  }

 private:
  std::mutex m_;
  int total_, lanes_, done_ = 0;
  SweepOptions opt_;
  std::chrono::steady_clock::time_point start_;
};

void write_failure(const RunDirFs& run, const Task& t, const std::string& reason,
                   const ExitStatus& st) {
  json f{{"shape", t.shape},
         {"arm", t.arm},
         {"variant", t.variant},
         {"reason", reason},
         {"exit", st.describe()},
         {"wall_s", st.wall_s},
         {"stdout", log_rel(t, "out").generic_string()},
         {"stderr", log_rel(t, "err").generic_string()},
         {"stderr_tail", printable(tail_of(run, log_rel(t, "err"), 20))}};
  run.write_json_atomic(log_rel(t, "failure.json"), f);
}

// The worker process of one arm, or of its warm-up (which writes no result and logs beside it).
// Its logs are created afresh without following links (system/run_dir_fs.hpp); the returned
// descriptors must stay open until the process ends.
struct ArmProcess {
  SpawnSpec spec;
  UniqueFd out, err;
};

ArmProcess worker_spec(const RunDirFs& run, const fs::path& run_dir, const Plan& plan,
                       const fs::path& worker, const Task& t, const Lane& lane, bool warmup) {
  run.make_dirs(log_rel(t, "out").parent_path());
  ArmProcess p;
  SpawnSpec& spec = p.spec;
  // A Python plugin's arm is the user's interpreter on the Python launcher, which calls the same
  // engine as abharness-worker (docs/python.md).
  if (plan.variant(t.variant).is_python()) {
    spec.argv = worker_protocol::python_run_command(
        plan.python->executable, python_launcher(worker), run_dir, t.shape, t.arm);
  } else {
    spec.argv = worker_protocol::run_args(run_dir, t.shape, t.arm, warmup);
    spec.argv.insert(spec.argv.begin(), worker.string());
  }
  p.out = run.create(log_rel(t, warmup ? "warmup.out" : "out"));
  p.err = run.create(log_rel(t, warmup ? "warmup.err" : "err"));
  spec.stdout_fd = p.out.get();
  spec.stderr_fd = p.err.get();
  spec.timeout_s = plan.settings.arm_timeout_s;
  // The worker asks the kernel to kill it when we die, so a killed orchestrator never leaves an
  // orphan that writes a result behind a later resume's back.
  spec.env[worker_protocol::kParentPidEnv] = std::to_string(::getpid());
  // A worker sees only the GPU of its arm: the driver then initialises one GPU, not all of them
  // (start-up on a 2-GPU H200 machine: 0.54 s -> 0.34 s), and a plugin cannot stray onto a GPU
  // that another arm is measuring on.
  if (!lane.gpu_uuid.empty()) spec.env[worker_protocol::kVisibleDevicesEnv] = lane.gpu_uuid;
  // CPUs the lane chose on its node (a launcher that places lanes): the plan names none.
  if (!lane.cpus.empty()) spec.env[worker_protocol::kArmCpusEnv] = format_cpu_list(lane.cpus);
  return p;
}

// Runs an arm once, unrecorded, before anything of the lane is measured. Without
// it the first arm of a run met a machine not yet warmed up (on the CPU demo A1 of the first shape
// took 2x its A2: drift -51 %; docs/measurements.md). A failed warm-up is said, not hidden; the
// arm itself then runs and reports for itself.
void warm_up(const fs::path& run_dir, const Plan& plan, const fs::path& worker, const Task& t,
             const Lane& lane, const SweepOptions& opt) {
  // The Python launcher has no warm-up mode yet: its arms start from the interpreter's own
  // start-up, which is slower than any warm-up effect seen (docs/python.md).
  if (plan.variant(t.variant).is_python()) return;
  const RunDirFs run(run_dir);
  ArmProcess p = worker_spec(run, run_dir, plan, worker, t, lane, true);
  const ExitStatus st = run_process(p.spec);
  if (!st.ok())
    std::cerr << "warm-up of " << t.shape << "/" << t.arm << " failed (" << st.describe()
              << "; log " << log_path(run_dir, t, "warmup.out").string()
              << "); measuring without it\n";
  else if (!opt.quiet && !opt.tty)
    std::cerr << "warm-up " << t.shape << "/" << t.arm << " " << st.wall_s << " s (not recorded)\n";
}

// Runs one arm; returns whether it produced a result. Every file of the arm is reached without
// following links (system/run_dir_fs.hpp): its logs are created afresh, never written through a
// link planted in their place.
bool run_arm(const fs::path& run_dir, const Plan& plan, const fs::path& worker, const Task& t,
             const Lane& lane, Progress& progress) {
  const RunDirFs run(run_dir);
  run.remove(log_rel(t, "failure.json"));
  const fs::path result = result_rel(t);
  run.make_dirs(result.parent_path());
  ArmProcess p = worker_spec(run, run_dir, plan, worker, t, lane, false);
  ExitStatus st = run_process(p.spec);
  p.out.reset();
  p.err.reset();
  bool ok = st.ok() && run.kind(result) == RunDirFs::Kind::file;
  if (!ok) {
    // A failed arm leaves no result: whatever it may have written is not evidence.
    run.remove(result);
    std::string reason;
    if (st.kind == ExitStatus::Kind::timed_out)
      reason = st.describe();
    else {
      std::string line = worker_error_line(run, log_rel(t, "err"));
      reason = st.ok() ? "the worker exited 0 but wrote no result" : st.describe();
      if (!line.empty()) reason += ": " + line;
    }
    write_failure(run, t, reason, st);
  }
  progress.finished(t, st, ok);
  return ok;
}

}  // namespace

std::string result_key(const fs::path& run_dir, const Task& t) {
  return result_path(run_dir, t).lexically_relative(run_dir).generic_string();
}

SweepSummary run_lanes(const fs::path& run_dir, const Plan& plan, const fs::path& worker,
                       const std::vector<Lane>& lanes, const SweepOptions& opt) {
  SweepSummary sum;
  int todo = 0;
  for (const auto& lane : lanes) todo += static_cast<int>(lane.tasks.size());
  Progress progress(todo, std::max<int>(1, static_cast<int>(lanes.size())), opt);
  std::mutex m;
  std::exception_ptr error;  // the first lane that could not go on (a damaged run directory)
  auto run_lane = [&](const Lane& lane) {
    try {
      // One warm-up per variant: each loads its own plugin, and the first arm to load one met it
      // cold (CPU A/A under load with the baseline alone warmed: the first shape's B arm slower
      // in 7 of 10 runs, speedup median 0.985; docs/measurements.md).
      std::set<std::string> warmed;
      for (const Task* t : lane.tasks)
        if (warmed.insert(t->variant).second) warm_up(run_dir, plan, worker, *t, lane, opt);
      for (const Task* t : lane.tasks) {
        bool ok = run_arm(run_dir, plan, worker, *t, lane, progress);
        std::lock_guard<std::mutex> g(m);
        ++sum.ran;
        if (!ok) ++sum.failed;
      }
    } catch (...) {
      std::lock_guard<std::mutex> g(m);
      if (!error) error = std::current_exception();
    }
  };
  if (lanes.size() <= 1) {
    for (const auto& lane : lanes) run_lane(lane);
  } else {
    std::vector<std::thread> threads;
    for (const auto& lane : lanes) threads.emplace_back(run_lane, std::cref(lane));
    for (auto& th : threads) th.join();
  }
  progress.close();
  if (error) std::rethrow_exception(error);
  return sum;
}

SweepSummary run_sweep(const fs::path& run_dir, const Plan& plan, const fs::path& worker,
                       const std::set<std::string>& done, const SweepOptions& opt) {
  std::map<int, Lane> lanes;  // one lane per GPU
  int skipped = 0;
  for (const auto& t : plan.tasks) {
    if (opt.select ? !opt.select(t) : t.conditional) continue;
    if (done.count(result_key(run_dir, t))) {
      ++skipped;
      continue;
    }
    Lane& lane = lanes[t.gpu];
    lane.index = t.gpu;
    const Environment& m = plan.machine.at(static_cast<size_t>(t.gpu));
    if (m.gpu) lane.gpu_uuid = m.gpu->uuid;
    lane.tasks.push_back(&t);
  }
  std::vector<Lane> list;
  for (auto& [gpu, lane] : lanes) list.push_back(std::move(lane));
  SweepSummary sum = run_lanes(run_dir, plan, worker, list, opt);
  sum.skipped = skipped;
  return sum;
}

}  // namespace abh
