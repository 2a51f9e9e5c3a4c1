// `abharness lane` (not listed in --help): what a Slurm job of a run executes on its node. It holds
// the node to the plan's machine (refusing, by name, a GPU model or driver the plan did not
// promise), records where it runs, and then runs its lane's arms that have no valid result yet,
// each in a fresh worker process, exactly as a local lane does (the same warm-up per variant, the
// same launch of built and Python arms: sweep.hpp). The CPUs its workers use are chosen here, on
// the node, and recorded with it: the plan names none. It takes no run lock: the
// orchestrator that submitted it holds that one; one lock per lane keeps two jobs of one lane
// apart.
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "arm_worker.hpp"
#include "exit_codes.hpp"
#include "paths.hpp"
#include "placement.hpp"
#include "planner.hpp"
#include "provenance/provenance.hpp"
#include "run_command.hpp"
#include "run_lock.hpp"
#include "sweep.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// The Slurm job this process is, from the environment Slurm gives every batch job.
NodeRecord this_job(int lane) {
  NodeRecord r;
  r.lane = lane;
  const char* id = std::getenv("SLURM_JOB_ID");
  if (!id || !*id)
    throw UsageError(
        "abharness lane runs inside a Slurm job that `abharness run --launcher "
        "slurm` submitted (SLURM_JOB_ID is not set)");
  r.job_id = id;
  const char* restart = std::getenv("SLURM_RESTART_COUNT");
  r.restart = restart && *restart ? std::atoi(restart) : 0;
  r.started_at = utc_timestamp();
  return r;
}

// The lane's arms and, for those with a valid result already, where it was measured.
struct LaneState {
  std::vector<const Task*> to_run;
  std::map<std::string, std::vector<std::pair<const Task*, std::string>>> measured;  // by shape
};

LaneState lane_state(const RunDirFs& run, const Plan& plan, int lane,
                     const std::vector<NodeRecord>& nodes) {
  LaneState s;
  const PlanIndex index(plan);
  for (const auto& t : plan.tasks) {
    if (t.gpu != lane || t.conditional) continue;
    const fs::path result = result_rel(t);
    if (run.kind(result) == RunDirFs::Kind::absent) {
      s.to_run.push_back(&t);
      continue;
    }
    std::vector<ProvenanceProblem> problems;
    std::optional<ArmResult> r;
    try {
      r = validate_result(index, t, result.generic_string(),
                          run.read_json(result, JsonLimits{64u << 20, 32}), problems, nodes);
    } catch (const std::exception& e) {
      problems.push_back({"result-format", result.generic_string(), "", "valid JSON", e.what()});
    }
    if (r)
      s.measured[t.shape].push_back({&t, arm_place(r->environment, r->placement.cpus)});
    else
      // Never overwritten: the orchestrator's validation names the problem.
      std::cerr << "lane " << lane << ": " << result.generic_string()
                << " failed validation; it is left as it is (" << problems.front().describe()
                << ")\n";
  }
  return s;
}

// A shape whose measured arms ran on another node, GPU or CPUs (the lane's earlier job was lost)
// is set aside and measured again whole: its arms are only comparable in one place.
std::vector<const Task*> shapes_to_remeasure(const LaneState& s, NodeRecord& rec,
                                             const fs::path& aside) {
  const std::string here = arm_place(rec.environment, rec.cpus);
  std::vector<const Task*> again;
  for (const auto& [shape, arms] : s.measured) {
    bool elsewhere = false;
    for (const auto& [task, place] : arms) elsewhere |= place != here;
    if (!elsewhere) continue;
    for (const auto& [task, place] : arms) {
      rec.set_aside.push_back((aside / shape / (task->arm + ".json")).generic_string());
      again.push_back(task);
    }
  }
  return again;
}

// Phase 1: this node must be the plan's machine; a refusal is recorded and nothing runs.
void hold_node_to_plan(const fs::path& run_dir, const Plan& plan, const fs::path& worker,
                       NodeRecord& rec) {
  const Environment& planned = plan.machine[static_cast<size_t>(rec.lane)];
  const fs::path scratch = fs::path("logs") / "lanes" / ("probe-job" + rec.job_id);
  const RunDirFs run(run_dir);
  run.make_dirs(scratch);
  rec.environment = probe_machine(worker, planned.gpu.has_value(), {"0"}, run.path(scratch)).at(0);
  if (std::string why = machine_mismatch(planned, rec.environment); !why.empty()) {
    rec.refused = "node " + rec.environment.hostname + " is not the planned machine: " + why;
    write_record(run, rec);
    throw UsageError(rec.refused);
  }
}

// Phase 1b: the CPUs of every worker of this job, chosen here by the rule the planner follows on
// one machine (placement.hpp): the planning machine's CPU numbers mean nothing on this node. From
// the CPUs Slurm gave the job, and for a GPU the ones local to it; the same for all arms.
void place_lane_here(NodeRecord& rec) {
  const LanePlacement p = place_lanes({rec.environment}, thread_affinity()).at(0);
  rec.cpus = p.cpus;
  rec.placement_note = p.note;
  if (!p.note.empty()) std::cerr << "lane " << rec.lane << ": placement: " << p.note << "\n";
}

// Interrupted writes of this lane's arms (hidden temp files beside their results): nothing else
// writes there while this job holds the lane's lock.
void remove_interrupted_writes(const RunDirFs& run, const Plan& plan, int lane) {
  std::set<std::string> shapes;
  for (const auto& t : plan.tasks)
    if (t.gpu == lane) shapes.insert(t.shape);
  for (const auto& shape : shapes) {
    const fs::path dir = fs::path("results") / shape;
    for (const auto& e : run.list(dir)) {
      if (e.kind != RunDirFs::Kind::file) continue;  // provenance names anything else
      if (e.name.size() > 1 && e.name[0] == '.' && e.name.find(".tmp.") != std::string::npos) {
        std::cerr << "lane " << lane << ": removing interrupted write " << e.name << "\n";
        run.remove(dir / e.name);
      }
    }
  }
}

// Phase 2: the arms to run here, in plan order; the node record is written (with what is set
// aside) before anything moves, so a job killed in between leaves its intent on record.
std::vector<const Task*> lane_work(const fs::path& run_dir, const Plan& plan, NodeRecord& rec) {
  const RunDirFs run(run_dir);
  remove_interrupted_writes(run, plan, rec.lane);
  std::vector<NodeRecord> nodes{rec};
  for (auto& r : load_node_records(run))
    if (r.lane == rec.lane && r.refused.empty()) nodes.push_back(std::move(r));
  LaneState state = lane_state(run, plan, rec.lane, nodes);
  const fs::path aside =
      fs::path("set_aside") / ("job" + rec.job_id + "-r" + std::to_string(rec.restart));
  std::vector<const Task*> again = shapes_to_remeasure(state, rec, aside);
  write_record(run, rec);
  for (const Task* t : again) {
    run.move(result_rel(*t), aside / t->shape / (t->arm + ".json"));
    std::cerr << "lane " << rec.lane << ": " << result_rel(*t).generic_string()
              << " was measured on another node, GPU or CPUs: set aside, its shape is measured "
                 "again here\n";
  }
  std::set<const Task*> todo(state.to_run.begin(), state.to_run.end());
  todo.insert(again.begin(), again.end());
  std::vector<const Task*> ordered;
  for (const auto& t : plan.tasks)
    if (todo.count(&t)) ordered.push_back(&t);
  return ordered;
}

int run_lane_job(const fs::path& run_dir, int lane, bool quiet) {
  const Plan plan = load_plan(run_dir);
  if (lane < 0 || static_cast<size_t>(lane) >= plan.machine.size())
    throw UsageError("--lane " + std::to_string(lane) + ": the plan has lanes 0 to " +
                     std::to_string(plan.machine.size() - 1));
  NodeRecord rec = this_job(lane);
  const fs::path worker = worker_binary();
  check_binaries(run_dir, plan, worker);
  RunLock lock(run_dir, fs::path("launcher") / ("lane" + std::to_string(lane) + ".lock"),
               "another job of lane " + std::to_string(lane) + " of " + run_dir.string() +
                   " is running: this one runs nothing");
  hold_node_to_plan(run_dir, plan, worker, rec);
  place_lane_here(rec);
  Lane todo{lane, rec.environment.gpu ? rec.environment.gpu->uuid : "",
            lane_work(run_dir, plan, rec), rec.cpus};
  std::cerr << "lane " << lane << " (job " << rec.job_id << ") on "
            << arm_place(rec.environment, rec.cpus) << ": " << todo.tasks.size()
            << " arm(s) to run\n";
  SweepOptions opt;
  opt.quiet = quiet;
  SweepSummary sum = run_lanes(run_dir, plan, WorkerProcesses(plan, worker), {todo}, opt);
  std::cerr << "lane " << lane << ": " << sum.ran - sum.failed << " measured, " << sum.failed
            << " failed\n";
  return exit_code::kSuccess;
}

}  // namespace

void add_lane_command(CLI::App& app, int& exit_code) {
  struct Flags {
    std::string run_dir;
    int lane = -1;
    bool quiet = false;
  };
  auto f = std::make_shared<Flags>();
  auto* c = app.add_subcommand("lane", "run one lane of a run inside its Slurm job");
  c->group("");  // started by the Slurm launcher, not by people
  c->add_option("--run-dir", f->run_dir, "run directory")->required();
  c->add_option("--lane", f->lane, "lane index")->required();
  c->add_flag("--quiet", f->quiet, "no line per arm");
  c->callback([f, &exit_code] {
    exit_code = run_lane_job(fs::absolute(f->run_dir).lexically_normal(), f->lane, f->quiet);
  });
}

}  // namespace abh
