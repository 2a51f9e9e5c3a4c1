// The Slurm launcher: each lane is one Slurm batch job that runs `abharness lane` on the node Slurm
// chose, which runs the lane's missing arms there one fresh worker after another and writes their
// results into the run directory on the shared filesystem. The orchestrator submits, watches the
// jobs with squeue, and reports what each job that ended left unmeasured; it never schedules
// anything itself. Jobs outlive a killed orchestrator: a resume finds them by name and waits for
// them instead of submitting their lanes again. docs/scale.md describes the mapping.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "launcher.hpp"
#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "planner.hpp"
#include "slurm.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// The name of a job of this run: squeue finds a run's jobs by it, also after a killed orchestrator.
std::string job_name(const std::string& run_id, const std::string& what) {
  return "abh-" + run_id + "-" + what;
}

std::string job_name(const std::string& run_id, int lane) {
  return job_name(run_id, "lane" + std::to_string(lane));
}

// A job this command waits for, and the arms of its lane it is expected to measure.
struct Tracked {
  int lane = -1;  // -1: the probe job
  std::string id, name;
  slurm::JobState last;
  bool finished = false;
  int unlisted = 0;  // consecutive polls in which squeue did not list it
  std::vector<const Task*> arms;
};

// Polls squeue until every job has finished, calling `changed` on each change of a job's state.
// A job that squeue stops listing has ended and been purged (Slurm's MinJobAge). Polls start at
// 0.2 s and back off to 5 s while nothing changes, so a sweep of hundreds of jobs costs the
// controller one squeue every few seconds.
template <typename OnChange>
void watch(const slurm::CommandRunner& slurm, std::vector<Tracked>& jobs, const fs::path& run_dir,
           OnChange changed) {
  double interval = 0.2;
  int failures = 0;
  while (std::any_of(jobs.begin(), jobs.end(), [](const Tracked& t) { return !t.finished; })) {
    std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    std::vector<std::string> names;
    for (const auto& t : jobs)
      if (!t.finished) names.push_back(t.name);
    std::vector<slurm::JobState> listed;
    try {
      listed = slurm::query(slurm, names, run_dir);
      failures = 0;
    } catch (const Error& e) {
      // The controller may be restarting; the jobs keep running meanwhile.
      if (++failures == 1) std::cerr << "abharness: squeue failed, retrying: " << e.what() << "\n";
      if (failures >= 60) throw;
      interval = 5;
      continue;
    }
    bool any_change = false;
    for (auto& t : jobs) {
      if (t.finished) continue;
      auto it = std::find_if(listed.begin(), listed.end(),
                             [&](const slurm::JobState& j) { return j.id == t.id; });
      slurm::JobState now;
      if (it != listed.end()) {
        now = *it;
        t.unlisted = 0;
      } else if (++t.unlisted < 2) {
        continue;  // once may be a race with the job's start; twice is gone
      } else {
        now = {t.id, t.name, "ENDED", t.last.node, "no longer known to Slurm"};
      }
      t.finished = it == listed.end() || slurm::is_finished(now.state);
      if (now != t.last || t.finished) {
        t.last = now;
        any_change = true;
        changed(t);
      }
    }
    interval = any_change ? 0.2 : std::min(5.0, interval * 1.5);
  }
}

std::string arm_key(const Task& t) {
  return t.shape + "/" + t.arm;
}

// What a lane's job left behind, read from the run directory when it ended.
struct LaneOutcome {
  std::vector<std::string> measured, failed, lost;
  std::string refused;  // a node record's refusal, if the job refused its node
};

LaneOutcome outcome_of(const fs::path& run_dir, const Tracked& t) {
  LaneOutcome o;
  const RunDirFs run(run_dir);
  for (const Task* a : t.arms) {
    if (run.kind(result_rel(*a)) == RunDirFs::Kind::file)
      o.measured.push_back(arm_key(*a));
    else if (run.kind(log_rel(*a, "failure.json")) == RunDirFs::Kind::file)
      o.failed.push_back(arm_key(*a));
    else
      o.lost.push_back(arm_key(*a));
  }
  try {
    for (const auto& r : load_node_records(run))
      if (r.job_id == t.id && !r.refused.empty()) o.refused = r.refused;
  } catch (const Error& e) {
    o.refused = std::string("(node records unreadable: ") + e.what() + ")";
  }
  return o;
}

std::string listed(const std::vector<std::string>& arms) {
  std::string s = join(
      {arms.begin(), arms.begin() + static_cast<long>(std::min<size_t>(arms.size(), 8))}, ", ");
  if (arms.size() > 8) s += ", ... (" + std::to_string(arms.size() - 8) + " more)";
  return s;
}

void print_transition(const Tracked& t) {
  std::cerr << (t.lane < 0 ? std::string("probe") : "lane " + std::to_string(t.lane)) << ": job "
            << t.id << " " << t.last.state;
  if (!t.last.node.empty()) std::cerr << " on " << t.last.node;
  if (!t.last.reason.empty() && t.last.reason != "None") std::cerr << " (" << t.last.reason << ")";
  std::cerr << "\n";
}

// Reports the end of a lane's job: what it measured, and by name what it did not.
void report_end(const fs::path& run_dir, const Tracked& t, SweepSummary& sum) {
  LaneOutcome o = outcome_of(run_dir, t);
  sum.ran += static_cast<int>(o.measured.size() + o.failed.size());
  sum.failed += static_cast<int>(o.failed.size());
  sum.lost += static_cast<int>(o.lost.size());
  std::cerr << "lane " << t.lane << ": job " << t.id << " ended " << t.last.state << ": "
            << o.measured.size() << " arm(s) measured";
  if (!o.failed.empty())
    std::cerr << ", " << o.failed.size() << " failed (" << listed(o.failed) << ")";
  std::cerr << "\n";
  if (!o.refused.empty())
    std::cerr << "lane " << t.lane << ": job " << t.id << " refused its node: " << o.refused
              << "\n";
  if (!o.lost.empty())
    std::cerr << "lane " << t.lane << ": job " << t.id << " " << t.last.state << " lost "
              << o.lost.size() << " arm(s): " << listed(o.lost) << "\n";
}

// The jobs of this run that Slurm still runs or queues, found by name: also one submitted just
// before a killed orchestrator could record it.
std::vector<Tracked> attach(const slurm::CommandRunner& slurm, const Plan& plan,
                            const std::map<int, std::vector<const Task*>>& lanes,
                            const fs::path& run_dir) {
  std::vector<std::string> names;
  for (int l = 0; l < plan.launcher.slurm.lanes; ++l) names.push_back(job_name(plan.run_id, l));
  std::vector<Tracked> jobs;
  for (const auto& j : slurm::query(slurm, names, run_dir)) {
    if (slurm::is_finished(j.state)) continue;
    auto n = std::find(names.begin(), names.end(), j.name);
    if (n == names.end()) continue;
    Tracked t;
    t.lane = static_cast<int>(n - names.begin());
    t.id = j.id;
    t.name = j.name;
    t.last = j;
    if (auto it = lanes.find(t.lane); it != lanes.end()) t.arms = it->second;
    std::cerr << "lane " << t.lane << ": re-attaching to job " << t.id << " (" << j.state
              << (j.node.empty() ? "" : " on " + j.node) << ")\n";
    jobs.push_back(std::move(t));
  }
  return jobs;
}

// Submits one lane's job and records it before waiting for anything.
Tracked submit_lane(const slurm::CommandRunner& slurm, const fs::path& run_dir, const Plan& plan,
                    int lane, const std::vector<const Task*>& arms) {
  // A failure record is evidence of this job only: the next one starts without old ones.
  const RunDirFs run(run_dir);
  for (const Task* a : arms) run.remove(log_rel(*a, "failure.json"));
  SubmissionRecord rec;
  rec.lane = lane;
  rec.job_name = job_name(plan.run_id, lane);
  for (const Task* a : arms) rec.arms.push_back(arm_key(*a));
  std::vector<std::string> command = {fs::canonical("/proc/self/exe").string(),
                                      "lane",
                                      "--run-dir",
                                      run_dir.string(),
                                      "--lane",
                                      std::to_string(lane)};
  // Slurm opens the job's log files on the node and does not create their directory.
  const fs::path logs = run_dir / "logs" / "lanes";
  run.make_dirs("logs/lanes");
  rec.sbatch = slurm::sbatch_argv(plan.launcher.slurm, rec.job_name, run_dir,
                                  logs / ("lane" + std::to_string(lane)), command);
  rec.job_id = slurm::submit(slurm, rec.sbatch, run_dir);
  rec.submitted_at = utc_timestamp();
  write_record(run, rec);
  std::cerr << "lane " << lane << ": submitted job " << rec.job_id << " (" << arms.size()
            << " arm(s))\n";
  Tracked t;
  t.lane = lane;
  t.id = rec.job_id;
  t.name = rec.job_name;
  t.arms = arms;
  return t;
}

class SlurmLauncher : public Launcher {
 public:
  explicit SlurmLauncher(const slurm::CommandRunner& slurm) : slurm_(slurm) {}

  LauncherSpec resolve(LauncherSpec spec, bool cuda) const override {
    slurm::check_options(spec.slurm);
    spec.slurm = slurm::with_defaults(spec.slurm, cuda);
    return spec;
  }

  int lanes(const LauncherSpec& spec, bool, size_t) const override { return spec.slurm.lanes; }

  std::vector<Environment> probe(const MachineRequest& req) const override;

  // The plan's CPU numbers would be the submitting machine's: each lane's job chooses its CPUs on
  // its node (cmd_lane.cpp) and records them with the node.
  void place(Plan&, const std::string&) const override {}

  // A lane is one job that runs its arms and ends; the rounds of --until-decided would need the
  // decision between jobs (refused when planning).
  bool runs_until_decided() const override { return false; }

  // Each lane's job compares its own node with the plan before it runs an arm; there is nothing
  // to probe here, on the machine that submits.
  void check_machine(const fs::path&, const Plan&, const fs::path&) const override {}

  SweepSummary run(const fs::path& run_dir, const Plan& plan, const fs::path& worker,
                   const std::set<std::string>& done, const SweepOptions& opt) const override;

 private:
  const slurm::CommandRunner& slurm_;  // sbatch and squeue
};

// The plan's machine comes from a probe job submitted with the lanes' options, so it describes a
// node of the kind the lanes will get; each lane's node is then held to it.
std::vector<Environment> SlurmLauncher::probe(const MachineRequest& req) const {
  slurm::write_batch_script(req.run_dir);
  std::vector<std::string> command = {req.worker.string()};
  for (const auto& a : worker_protocol::probe_args(req.cuda ? "0" : "")) command.push_back(a);
  const fs::path stem = req.run_dir / "logs" / "probe" / "slurm-probe";
  const RunDirFs run(req.run_dir);
  run.make_dirs("logs/probe");
  Tracked t;
  t.name = job_name(req.run_id, "probe");
  t.id = slurm::submit(slurm_,
                       slurm::sbatch_argv(req.launcher.slurm, t.name, req.run_dir, stem, command),
                       req.run_dir);
  std::cerr << "probing a node with Slurm job " << t.id << "\n";
  std::vector<Tracked> jobs{t};
  watch(slurm_, jobs, req.run_dir, print_transition);
  const fs::path out = fs::path("logs") / "probe" / ("slurm-probe-" + t.id + ".out");
  const fs::path err = stem.string() + "-" + t.id + ".err";
  Environment e;
  try {
    e = environment_from_json(parse_json(run.read(out, 1u << 20), out.string()), out.string());
  } catch (const Error& ex) {
    throw Error("the Slurm probe job " + t.id + " ended " + jobs[0].last.state +
                " without describing its node (" + ex.what() + "); its stderr is " + err.string());
  }
  std::cerr << "probe: " << e.hostname << (e.gpu ? ", " + e.gpu->name : std::string()) << "\n";
  return std::vector<Environment>(static_cast<size_t>(req.launcher.slurm.lanes),
                                  without_placement(e));
}

SweepSummary SlurmLauncher::run(const fs::path& run_dir, const Plan& plan, const fs::path&,
                                const std::set<std::string>& done, const SweepOptions& opt) const {
  // The lanes' jobs start their workers on other nodes: the gate comes before any is submitted.
  if (opt.before_first_turn) opt.before_first_turn();
  slurm::write_batch_script(run_dir);
  SweepSummary sum;
  std::map<int, std::vector<const Task*>> missing;
  for (const auto& t : plan.tasks) {
    if (t.conditional) continue;  // never planned with this launcher (runs_until_decided)
    if (done.count(result_key(run_dir, t)))
      ++sum.skipped;
    else
      missing[t.gpu].push_back(&t);
  }
  // Phase 1: re-attach to this run's jobs that are still queued or running.
  std::vector<Tracked> jobs = attach(slurm_, plan, missing, run_dir);
  // Phase 2: submit every other lane that has arms to run.
  for (const auto& [lane, arms] : missing) {
    bool running = std::any_of(jobs.begin(), jobs.end(),
                               [&, l = lane](const Tracked& t) { return t.lane == l; });
    if (!running) jobs.push_back(submit_lane(slurm_, run_dir, plan, lane, arms));
  }
  if (jobs.empty()) return sum;
  std::cerr << "the jobs keep running if this command stops: `abharness resume " << run_dir.string()
            << "` re-attaches to them (scancel stops them)\n";
  // Phase 3: wait for every job, and report what each one that ended did not measure.
  watch(slurm_, jobs, run_dir, [&](const Tracked& t) {
    if (!opt.quiet && !t.finished) print_transition(t);
    if (t.finished) report_end(run_dir, t, sum);
  });
  return sum;
}

}  // namespace

const Launcher& slurm_launcher() {
  static const SlurmLauncher l(slurm::process_runner());
  return l;
}

std::unique_ptr<Launcher> make_slurm_launcher(const slurm::CommandRunner& slurm) {
  return std::make_unique<SlurmLauncher>(slurm);
}

}  // namespace abh
