// The Slurm launcher (orchestrator/launcher_slurm.cpp) against a fake cluster put in at its seam,
// the runner of its sbatch and squeue commands (slurm.hpp): the jobs it submits, with the argv,
// batch script and records docs/scale.md describes; the squeue it watches them with; what it
// reports of each lane when its job ends; and a resume that re-attaches to a job still queued.
// tests/integration/slurm.sh drives a real one-node Slurm.
#include <doctest/doctest.h>
#include <unistd.h>

#include <functional>
#include <set>

#include "launcher.hpp"
#include "model/launch.hpp"
#include "plan_fixture.hpp"
#include "slurm.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

using Argv = std::vector<std::string>;

// The value of `--flag=value` in `argv`, or "".
std::string value_of(const Argv& argv, const std::string& flag) {
  for (const auto& a : argv)
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  return "";
}

// A cluster that runs nothing. sbatch queues a job (ids from 100); squeue lists each job it is
// asked for by name PENDING, then RUNNING on node-1, then COMPLETED, one state per listing. When a
// job completes, `on_end` leaves in the run directory what the job would have. Every command is
// logged, and with each squeue the submission records that existed when it ran.
class FakeSlurm : public slurm::CommandRunner {
 public:
  struct Job {
    std::string id, name;
    int listed = 0;
  };
  std::function<void(const fs::path& run_dir, const Job&)> on_end = [](const fs::path&,
                                                                       const Job&) {};
  mutable std::vector<Argv> calls;
  mutable std::vector<Job> jobs;
  mutable std::vector<std::set<std::string>> records_at_squeue;

  std::string run(const Argv& argv, const fs::path& run_dir) const override {
    calls.push_back(argv);
    if (argv.at(0) == "sbatch") {
      jobs.push_back({std::to_string(next_id_++), value_of(argv, "--job-name"), 0});
      return "sbatch: warning: a fake cluster\n" + jobs.back().id + "\n";
    }
    if (argv.at(0) != "squeue") throw Error("the fake cluster has no " + argv[0]);
    records_at_squeue.push_back(records(run_dir));
    const std::string names = "," + value_of(argv, "--name") + ",";
    std::string out;
    for (auto& j : jobs) {
      if (names.find("," + j.name + ",") == std::string::npos) continue;
      static const char* const kStates[] = {"PENDING||Resources", "RUNNING|node-1|None",
                                            "COMPLETED|node-1|None"};
      const int s = std::min(j.listed++, 2);
      if (s == 2 && j.listed == 3) on_end(run_dir, j);
      out += j.id + "|" + j.name + "|" + kStates[s] + "\n";
    }
    return out;
  }
  // A job submitted before this command ran (by an orchestrator since killed).
  void queued(const std::string& id, const std::string& name) { jobs.push_back({id, name, 0}); }
  std::vector<Argv> calls_of(const std::string& program) const {
    std::vector<Argv> out;
    for (const auto& c : calls)
      if (c.at(0) == program) out.push_back(c);
    return out;
  }

 private:
  static std::set<std::string> records(const fs::path& run_dir) {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run_dir / "launcher" / "jobs", ec))
      names.insert(e.path().filename().string());
    return names;
  }
  mutable int next_id_ = 100;
};

// The fixture plan's two shapes in two Slurm lanes (m32 in lane 0, m64 in lane 1), with options
// of each kind; the CPUs are each lane's to choose.
Plan slurm_plan() {
  Plan p = test::fixture_plan(2);
  p.launcher.name = "slurm";
  p.launcher.slurm = {2, "gpu", "", "0:30:00", "gpu:1", {"--qos=high"}};
  for (auto& t : p.tasks) t.cpus.clear();
  return p;
}

Argv squeue(const std::string& names) {
  return {"squeue",
          "--noheader",
          "--states=all",
          "--format=%i|%j|%T|%N|%r",
          "--user=" + std::to_string(::getuid()),
          "--name=" + names};
}

// The sbatch argv of a lane, as docs/scale.md describes it.
Argv lane_sbatch(const fs::path& run, int lane) {
  const std::string l = std::to_string(lane);
  return {"sbatch",
          "--parsable",
          "--job-name=abh-run-1-lane" + l,
          "--chdir=" + run.string(),
          "--output=" + run.string() + "/logs/lanes/lane" + l + "-%j.out",
          "--error=" + run.string() + "/logs/lanes/lane" + l + "-%j.err",
          "--open-mode=append",
          "--nodes=1",
          "--ntasks=1",
          "--partition=gpu",
          "--time=0:30:00",
          "--gres=gpu:1",
          "--qos=high",
          run.string() + "/launcher/job.sbatch",
          fs::canonical("/proc/self/exe").string(),
          "lane",
          "--run-dir",
          run.string(),
          "--lane",
          l};
}

void leave_result(const fs::path& run, const Plan& p, const std::string& shape,
                  const std::string& arm) {
  test::write(result_path(run, *p.find_task(shape, arm)), "{}");
}

SweepSummary run_slurm(const FakeSlurm& cluster, const fs::path& run, const Plan& p,
                       const std::set<std::string>& done = {}) {
  SweepOptions opt;
  opt.quiet = true;
  return make_slurm_launcher(cluster)->run(run, p, "/unused/worker", done, opt);
}

}  // namespace

TEST_CASE("slurm launcher: one job per lane, submitted and recorded as scale.md says") {
  test::TempDir tmp;
  const fs::path run = tmp.path();
  const Plan p = slurm_plan();
  // A failure record of an earlier job is evidence of that job only.
  test::write(log_path(run, *p.find_task("m32", "B"), "failure.json"), "{}");
  FakeSlurm cluster;
  // Lane 0 measures its shape; lane 1 measures A1, fails B and is cut off before A2.
  cluster.on_end = [&](const fs::path& dir, const FakeSlurm::Job& j) {
    if (j.name == "abh-run-1-lane0")
      for (const char* arm : {"A1", "B", "A2"}) leave_result(dir, p, "m32", arm);
    if (j.name == "abh-run-1-lane1") {
      leave_result(dir, p, "m64", "A1");
      test::write(log_path(dir, *p.find_task("m64", "B"), "failure.json"), "{}");
    }
  };
  const SweepSummary s = run_slurm(cluster, run, p);
  CHECK(s.ran == 5);
  CHECK(s.failed == 1);
  CHECK(s.lost == 1);
  CHECK(s.skipped == 0);

  // First the run's jobs still in Slurm (none), then one sbatch per lane, then squeue polls.
  REQUIRE(cluster.calls.size() >= 5);
  CHECK(cluster.calls[0] == squeue("abh-run-1-lane0,abh-run-1-lane1"));
  CHECK(cluster.calls[1] == lane_sbatch(run, 0));
  CHECK(cluster.calls[2] == lane_sbatch(run, 1));
  CHECK(cluster.calls[3] == squeue("abh-run-1-lane0,abh-run-1-lane1"));
  CHECK(cluster.calls_of("sbatch").size() == 2);
  // Each job is recorded before anything waits for it.
  REQUIRE(cluster.records_at_squeue.size() >= 2);
  CHECK(cluster.records_at_squeue[0].empty());
  CHECK(cluster.records_at_squeue[1] ==
        std::set<std::string>{"lane0-job100.json", "lane1-job101.json"});
  const auto subs = load_submissions(run);
  REQUIRE(subs.size() == 2);
  CHECK(subs[0].lane == 0);
  CHECK(subs[0].job_id == "100");
  CHECK(subs[0].job_name == "abh-run-1-lane0");
  CHECK(subs[0].sbatch == lane_sbatch(run, 0));
  CHECK(subs[0].arms == Argv{"m32/A1", "m32/B", "m32/A2"});
  CHECK(subs[1].arms == Argv{"m64/A1", "m64/B", "m64/A2"});

  // The fixed batch script executes its arguments; Slurm does not create the logs' directory.
  CHECK(test::contains(test::slurp(run / "launcher" / "job.sbatch"), "\nexec \"$@\"\n"));
  CHECK(fs::is_directory(run / "logs" / "lanes"));
  CHECK_FALSE(fs::exists(log_path(run, *p.find_task("m32", "B"), "failure.json")));
}

TEST_CASE("slurm launcher: a resume re-attaches to its lane's queued job and submits the others") {
  test::TempDir tmp;
  const fs::path run = tmp.path();
  const Plan p = slurm_plan();
  FakeSlurm cluster;
  cluster.queued("77", "abh-run-1-lane0");
  cluster.on_end = [&](const fs::path& dir, const FakeSlurm::Job& j) {
    const bool lane0 = j.name == "abh-run-1-lane0";
    for (const char* arm : {"A1", "B", "A2"})
      if (lane0 || std::string(arm) != "A1") leave_result(dir, p, lane0 ? "m32" : "m64", arm);
  };
  const SweepSummary s = run_slurm(cluster, run, p, {result_key(run, *p.find_task("m64", "A1"))});
  CHECK(s.skipped == 1);
  CHECK(s.ran == 5);
  CHECK(s.failed == 0);
  CHECK(s.lost == 0);
  // Lane 0 has a job: only lane 1 is submitted, with the arms it still misses.
  CHECK(cluster.calls_of("sbatch") == std::vector<Argv>{lane_sbatch(run, 1)});
  const auto subs = load_submissions(run);
  REQUIRE(subs.size() == 1);
  CHECK(subs[0].job_id == "100");
  CHECK(subs[0].arms == Argv{"m64/B", "m64/A2"});
  // Both jobs are watched, each until it ends: lane 0's job ends first.
  CHECK(cluster.calls_of("squeue").at(1) == squeue("abh-run-1-lane0,abh-run-1-lane1"));
  CHECK(cluster.calls.back() == squeue("abh-run-1-lane1"));
}

TEST_CASE("slurm launcher: a lane with nothing to run gets no job") {
  test::TempDir tmp;
  const fs::path run = tmp.path();
  const Plan p = slurm_plan();
  std::set<std::string> done;
  for (const auto& t : p.tasks) done.insert(result_key(run, t));
  FakeSlurm cluster;
  const SweepSummary s = run_slurm(cluster, run, p, done);
  CHECK(s.skipped == 6);
  CHECK(s.ran == 0);
  CHECK(cluster.calls == std::vector<Argv>{squeue("abh-run-1-lane0,abh-run-1-lane1")});
}

TEST_CASE("slurm launcher: the probe job describes a node, without its name and GPU") {
  test::TempDir tmp;
  const fs::path run = tmp.path();
  const Environment node = test::fixture_plan(1).machine.at(0);
  FakeSlurm cluster;
  cluster.on_end = [&](const fs::path& dir, const FakeSlurm::Job& j) {
    test::write(dir / "logs" / "probe" / ("slurm-probe-" + j.id + ".out"), to_json(node).dump());
  };
  MachineRequest req;
  req.launcher.name = "slurm";
  req.launcher.slurm = {3, "", "acct", "", "gpu:1", {}};
  req.cuda = true;
  req.run_dir = run;
  req.worker = "/opt/abh/abharness-worker";
  req.run_id = "run-1";
  const std::vector<Environment> machine = make_slurm_launcher(cluster)->probe(req);
  CHECK(machine == std::vector<Environment>(3, without_placement(node)));
  CHECK(machine[0].hostname.empty());
  CHECK(cluster.calls_of("sbatch") ==
        std::vector<Argv>{{"sbatch", "--parsable", "--job-name=abh-run-1-probe",
                           "--chdir=" + run.string(),
                           "--output=" + run.string() + "/logs/probe/slurm-probe-%j.out",
                           "--error=" + run.string() + "/logs/probe/slurm-probe-%j.err",
                           "--open-mode=append", "--nodes=1", "--ntasks=1", "--account=acct",
                           "--gres=gpu:1", run.string() + "/launcher/job.sbatch",
                           "/opt/abh/abharness-worker", "probe", "--gpu", "0"}});
  CHECK(cluster.calls_of("squeue").back() == squeue("abh-run-1-probe"));
}
