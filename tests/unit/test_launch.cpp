// Where lanes run (model/launch.hpp): the launcher's JSON mapping, the placement a plan cannot know
// before Slurm chose a node, the check that holds a node to the plan by name, and the records of
// what was submitted and where it ran.
#include <doctest/doctest.h>

#include "model/launch.hpp"
#include "plan_fixture.hpp"
#include "system/error.hpp"
#include "system/run_dir_fs.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

Environment h200() {
  return test::fixture_plan(1).machine.at(0);
}

NodeRecord node_record(int lane, const std::string& job) {
  NodeRecord r;
  r.lane = lane;
  r.job_id = job;
  r.started_at = "2026-11-29T12:00:00Z";
  r.environment = h200();
  r.set_aside = {"set_aside/job1-r0/m32/A1.json"};
  r.cpus = {7, 6};  // chosen on the node: the measuring thread's first
  r.placement_note = "";
  return r;
}

}  // namespace

TEST_CASE("launch: the launcher spec round-trips and refuses what it cannot run") {
  LauncherSpec slurm{"slurm", {4, "gpu", "proj", "30:00", "gpu:h200:1", {"--qos=high"}}};
  CHECK(launcher_spec_from_json(to_json(slurm), "plan.json") == slurm);
  CHECK(launcher_spec_from_json(to_json(LauncherSpec{}), "plan.json") == LauncherSpec{});
  CHECK_FALSE(to_json(LauncherSpec{}).contains("slurm"));
  CHECK(test::error_of([] {
          launcher_spec_from_json(json{{"name", "pbs"}}, "plan.json");
        }) == "plan.json: field 'name': launcher 'pbs' is neither local nor slurm");
  json zero = to_json(slurm);
  zero["slurm"]["lanes"] = 0;
  CHECK(test::error_of([&] { launcher_spec_from_json(zero, "plan.json"); }) ==
        "plan.json.slurm: field 'lanes': must be at least 1");
  json bad_arg = to_json(slurm);
  bad_arg["slurm"]["sbatch_args"] = json::array({1});
  CHECK(test::error_of([&] { launcher_spec_from_json(bad_arg, "plan.json"); }) ==
        "plan.json.slurm: field 'sbatch_args[0]': expected a string, found 1");
  CHECK(launcher_places_lanes(slurm));
  CHECK_FALSE(launcher_places_lanes(LauncherSpec{}));
}

TEST_CASE("launch: placement is what Slurm chooses, and only that") {
  Environment node = h200();
  node.hostname = "gpu-17";
  node.gpu->uuid = "GPU-17";
  node.gpu->pci_bus_id = "0000:17:00.0";
  node.gpu->index = 3;
  Environment planned = without_placement(node);
  CHECK(planned.hostname.empty());
  CHECK(planned.gpu->uuid.empty());
  CHECK(planned.gpu->pci_bus_id.empty());
  CHECK(planned.gpu->index == 0);
  CHECK(planned.gpu->name == node.gpu->name);
  CHECK(planned.driver_version == node.driver_version);
  CHECK(with_placement(planned, node) == node);
  CHECK(machine_mismatch(planned, node) == "");
}

TEST_CASE("launch: a node unlike the plan is named by the field that differs") {
  Environment planned = without_placement(h200());
  Environment node = h200();
  node.hostname = "gpu-17";
  SUBCASE("another GPU model") {
    node.gpu->name = "NVIDIA H100 80GB HBM3";
    CHECK(machine_mismatch(planned, node) ==
          "GPU model (gpu.name): plan \"NVIDIA H200\", node \"NVIDIA H100 80GB HBM3\"");
  }
  SUBCASE("another driver") {
    node.driver_version = "575.1";
    CHECK(machine_mismatch(planned, node) ==
          "driver (driver_version): plan \"580.65\", node "
          "\"575.1\"");
  }
  SUBCASE("no GPU at all") {
    node.gpu.reset();
    CHECK(machine_mismatch(planned, node).rfind("gpu: plan {", 0) == 0);
  }
  SUBCASE("the plugin's libraries are not the machine's") {
    node.libraries = {{"cublasLt", "13.0"}};
    CHECK(machine_mismatch(planned, node) == "");
  }
}

TEST_CASE("launch: records round-trip, and a job id must be a Slurm job id") {
  SubmissionRecord s{1,         "4242",         "abh-run-lane1", "2026-11-29T12:00:00Z",
                     {"m32/B"}, {"sbatch", "x"}};
  SubmissionRecord back = submission_from_json(to_json(s), "jobs/x.json");
  CHECK(to_json(back) == to_json(s));
  NodeRecord n = node_record(1, "4242");
  CHECK(to_json(node_record_from_json(to_json(n), "nodes/x.json")) == to_json(n));
  CHECK(node_record_from_json(to_json(n), "nodes/x.json").cpus == std::vector<int>{7, 6});
  json no_cpus = to_json(n);
  no_cpus["cpus"] = json::array({"7"});
  CHECK(test::error_of([&] { node_record_from_json(no_cpus, "nodes/x.json"); }) ==
        "nodes/x.json: field 'cpus': every entry must be a CPU number (an integer >= 0)");
  json bad = to_json(s);
  bad["job_id"] = "../42";
  CHECK(test::error_of([&] { submission_from_json(bad, "jobs/x.json"); }) ==
        "jobs/x.json: field 'job_id': '../42' is not a Slurm job id (digits)");
  bad = to_json(n);
  bad["lane"] = -1;
  CHECK(test::error_of([&] { node_record_from_json(bad, "nodes/x.json"); }) ==
        "nodes/x.json: field 'lane': -1 is negative");
}

TEST_CASE("launch: records load sorted, interrupted writes skipped, a bad file named") {
  test::TempDir tmp;
  const fs::path run = tmp.path();
  CHECK(load_node_records(run).empty());
  CHECK(load_submissions(run).empty());
  for (const auto& [lane, job] : {std::pair{1, "20"}, std::pair{0, "30"}})
    write_record(RunDirFs(run), node_record(lane, job));
  CHECK(node_record_path(run, 1, "20", 2) == run / "launcher/nodes/lane1-job20-r2.json");
  CHECK(submission_path(run, 1, "20") == run / "launcher/jobs/lane1-job20.json");
  test::write(run / "launcher/nodes/.lane0-job40-r0.json.tmp.123", "{");
  auto nodes = load_node_records(run);
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].job_id == "30");
  CHECK(nodes[1].job_id == "20");
  fs::create_symlink(run / "launcher/nodes/lane1-job20-r0.json",
                     run / "launcher/nodes/lane3-job60-r0.json");
  CHECK(test::error_of([&] {
          load_node_records(run);
        }).find("lane3-job60-r0.json is not a regular file (a link or a directory)") !=
        std::string::npos);
  fs::remove(run / "launcher/nodes/lane3-job60-r0.json");
  test::write(run / "launcher/nodes/lane2-job50-r0.json", "[]");
  CHECK(test::error_of([&] {
          load_node_records(run);
        }).find("launcher/nodes/lane2-job50-r0.json") != std::string::npos);
}
