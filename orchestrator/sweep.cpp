#include "sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "model/worker_protocol.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"
#include "system/text.hpp"
#include "variants.hpp"

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
    std::snprintf(line, sizeof line, "[%*d/%d] %s/%s %s %.2f s | elapsed %s, ETA %s",
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

// A lane's workers in order: one warm-up per variant, then its arms. Without the warm-up the first
// arm of a run met a machine not yet warmed up (on the CPU demo A1 of the first shape took 2x its
// A2: drift -51 %), and each variant loads its own plugin, which the first arm to load it met cold
// (CPU A/A under load with the baseline alone warmed: the first shape's B arm slower in 7 of 10
// runs, speedup median 0.985; docs/measurements.md). Python plugins get theirs too: without it
// A1 of NumPy shapes ran 7-25 % slower than A2 on a 2-core machine; with it A1 was the slower in
// 10 of 24 idle A/A shapes (docs/measurements.md). Variants in `warm` have measured arms in this
// invocation already (SweepOptions::warm) and get none.
std::vector<Step> lane_steps(const Lane& lane, const std::set<std::string>& warm) {
  std::vector<Step> steps;
  std::set<std::string> warmed = warm;
  for (const Task* t : lane.tasks)
    if (warmed.insert(t->variant).second) steps.push_back({t, true});
  for (const Task* t : lane.tasks) steps.push_back({t, false});
  return steps;
}

// A warm-up that failed is said, not hidden; the arm itself then runs and reports for itself.
void conclude_warm_up(const RunDirFs& run, const Task& t, const ExitStatus& st,
                      const SweepOptions& opt) {
  if (!st.ok())
    std::cerr << "warm-up of " << t.shape << "/" << t.arm << " failed (" << st.describe()
              << "; log " << run.path(log_rel(t, "warmup.out")).string()
              << "); measuring without it\n";
  else if (!opt.quiet && !opt.tty)
    std::cerr << "warm-up " << t.shape << "/" << t.arm << " " << st.wall_s << " s (not recorded)\n";
}

// Whether an arm that ended produced a result; a failed one leaves none (whatever it may have
// written is not evidence) and a failure record that says why.
bool conclude_arm(const RunDirFs& run, const Task& t, const ExitStatus& st) {
  const fs::path result = result_rel(t);
  if (st.ok() && run.kind(result) == RunDirFs::Kind::file) return true;
  run.remove(result);
  std::string reason;
  if (st.kind == ExitStatus::Kind::timed_out) {
    reason = st.describe();
  } else {
    std::string line = worker_error_line(run, log_rel(t, "err"));
    reason = st.ok() ? "the worker exited 0 but wrote no result" : st.describe();
    if (!line.empty()) reason += ": " + line;
  }
  write_failure(run, t, reason, st);
  return false;
}

// Starts the worker of a step. Every file of the arm is reached without following links
// (system/run_dir_fs.hpp): an old failure record goes, the result's directory is made.
std::unique_ptr<ArmProcess> start_step(const RunDirFs& run, const WorkerStarter& starter,
                                       const Step& s, const Lane& lane) {
  if (!s.warmup) {
    run.remove(log_rel(*s.task, "failure.json"));
    run.make_dirs(result_rel(*s.task).parent_path());
  }
  return starter.start(run, lane, s);
}

// Before a lane's first turn, with workers started ahead: the first started worker of each variant
// has loaded its plan and plugin (a Python plugin: imported the user's module, as the dry run
// would have; dry_run.hpp). One that ended or hung instead refuses the run here, with the
// worker's own account, before anything is measured.
void await_first_loads(const RunDirFs& run, const Plan& plan, const std::vector<Step>& steps,
                       const std::deque<std::unique_ptr<ArmProcess>>& started) {
  std::set<std::string> seen;
  for (size_t i = 0; i < started.size(); ++i) {
    const Step& s = steps[i];
    if (!seen.insert(s.task->variant).second || started[i]->loaded()) continue;
    const ExitStatus st = started[i]->finish();
    const fs::path err = log_rel(*s.task, s.warmup ? "warmup.err" : "err");
    const std::string why = worker_error_line(run, err);
    throw UsageError(plugin_label(plan, plan.variant(s.task->variant)) +
                     " failed in its first worker, before its turn (" + s.task->shape + "/" +
                     s.task->arm + (s.warmup ? ", its warm-up" : "") + ": " + st.describe() +
                     (why.empty() ? "" : ": " + why) + "; log " + run.path(err).string() +
                     "); fix the plugin or its environment and run again (nothing was measured)");
  }
}

// Runs a lane's steps one after another on its GPU. With workers started ahead (the plan's
// schedule.start_ahead, N), the next N steps' workers are started while the current one
// measures, and each gets its turn once the one before it has ended; otherwise each starts then.
// The first turn waits for the first of each variant's workers among the first 1 + N started
// ahead to have loaded (await_first_loads), then for `before_first_turn` (SweepOptions), which
// they load beside. `done` is told of each step as it ends, after the next one has its turn.
void run_steps(const RunDirFs& run, const Plan& plan, const WorkerStarter& starter,
               const Lane& lane, const std::vector<Step>& steps,
               const std::function<void()>& before_first_turn,
               const std::function<void(const Step&, const ExitStatus&)>& done) {
  std::deque<std::unique_ptr<ArmProcess>> started;  // in the steps' order, from the current one
  size_t next = 0;                                  // the first step without a worker
  auto start_next = [&] { started.push_back(start_step(run, starter, steps[next++], lane)); };
  const size_t ahead = static_cast<size_t>(std::max(0, plan.schedule.start_ahead));
  auto start_ahead = [&] {
    while (next < steps.size() && started.size() < 1 + ahead) start_next();
  };
  if (!steps.empty()) {
    // A worker not started ahead measures as soon as it starts: it must wait for the gate.
    if (ahead > 0) {
      start_ahead();
      await_first_loads(run, plan, steps, started);
    }
    if (before_first_turn) before_first_turn();
    if (started.empty()) start_next();
    started.front()->go();
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    start_ahead();
    // The next turn comes once the current worker has freed the GPU: when it says so, while its
    // process exits, or else when its process has ended.
    std::unique_ptr<ArmProcess> current = std::move(started.front());
    started.pop_front();
    std::optional<ExitStatus> st;
    if (!current->released()) st = current->finish();
    if (started.empty() && next < steps.size()) start_next();
    if (!started.empty()) started.front()->go();
    if (!st) st = current->finish();
    done(steps[i], *st);
  }
}

}  // namespace

std::string result_key(const fs::path&, const Task& t) {
  return result_rel(t).generic_string();  // what result_path(run_dir, t) is, inside run_dir
}

SweepSummary run_lanes(const fs::path& run_dir, const Plan& plan, const WorkerStarter& starter,
                       const std::vector<Lane>& lanes, const SweepOptions& opt) {
  SweepSummary sum;
  int todo = 0;
  for (const auto& lane : lanes) todo += static_cast<int>(lane.tasks.size());
  Progress progress(todo, std::max<int>(1, static_cast<int>(lanes.size())), opt);
  std::mutex m;
  std::exception_ptr error;  // the first lane that could not go on (a damaged run directory)
  auto run_lane = [&](const Lane& lane) {
    try {
      const RunDirFs run(run_dir);
      run_steps(run, plan, starter, lane, lane_steps(lane, opt.warm), opt.before_first_turn,
                [&](const Step& s, const ExitStatus& st) {
                  if (s.warmup) return conclude_warm_up(run, *s.task, st, opt);
                  const bool ok = conclude_arm(run, *s.task, st);
                  progress.finished(*s.task, st, ok);
                  std::lock_guard<std::mutex> g(m);
                  ++sum.ran;
                  sum.variants_ran.insert(s.task->variant);
                  if (!ok) ++sum.failed;
                });
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

SweepSummary run_sweep(const fs::path& run_dir, const Plan& plan, const WorkerStarter& starter,
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
  SweepSummary sum = run_lanes(run_dir, plan, starter, list, opt);
  sum.skipped = skipped;
  return sum;
}

}  // namespace abh
