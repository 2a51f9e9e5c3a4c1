// The rounds of --until-decided (orchestrator/adaptive_sweep.hpp) over fake workers that write
// valid results: after the planned block, only the blocks the adaptive rule calls for run, block
// by block, and a failed arm stops the extension.
#include <doctest/doctest.h>

#include "adaptive_sweep.hpp"
#include "fake_workers.hpp"
#include "model/result.hpp"
#include "plan_fixture.hpp"
#include "report_fixtures.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

using namespace abh;
using namespace abh::test;
namespace fs = std::filesystem;

namespace {

// A run directory whose plan has two conditional blocks per shape after the planned one, and
// workers whose results are valid: the baseline at 10 us; the candidate of m32 2x faster
// (decided at once); that of m64 10 % faster, but m64's first block drifts 5 % between its A arms
// (unstable), so the rule calls for its block 1, which agrees and decides it.
struct AdaptiveRun {
  TempDir tmp{"abh-adaptive"};
  fs::path dir = tmp.path();
  Plan plan = fixture_plan();
  FakeWorkers workers;

  AdaptiveRun() {
    plan.schedule.until_decided = 2;
    plan.schedule.start_ahead = 1;
    plan.tasks = make_schedule(plan.shapes, plan.schedule);
    for (auto& t : plan.tasks) t.cpus = {1, 0};
    for (const auto& v : plan.variants) test::write(dir / v.plugin, "plugin of " + v.name);
    write_plan(dir, plan);
    plan.file_sha256 = sha256_file(plan_path(dir));
    workers.write_result = [this](const RunDirFs&, const Task& t) { write(t); };
  }
  void write(const Task& t) const {
    double ns = t.variant == "baseline" ? 10000 : (t.shape == "m32" ? 5000 : 9000);
    if (t.shape == "m64" && t.round == 0 && t.arm == "A2") ns = 10500;
    ArmResult r = fixture_result(plan, t);
    r.measurement.samples_ns =
        make_result(plan, t, ns, 1 + (&t - plan.tasks.data())).measurement.samples_ns;
    write_result(dir, result_rel(t), r);
  }
  // The planned block, as the sweep before the extension leaves it.
  void planned_block_measured() const {
    for (const auto& t : plan.tasks)
      if (!t.conditional) write(t);
  }
  int extend() const {
    SweepOptions opt;
    opt.quiet = true;
    return run_adaptive_blocks(dir, plan, workers, opt);
  }
};

}  // namespace

TEST_CASE("adaptive sweep: only the block the rule calls for runs, and then it stops") {
  AdaptiveRun run;
  run.planned_block_measured();
  CHECK(run.extend() == 3);
  CHECK(run.workers.started() ==
        std::vector<std::string>{"warmup m64/A3", "warmup m64/B2", "m64/A3", "m64/B2", "m64/A4"});
}

TEST_CASE("adaptive sweep: variants measured already in this invocation start without a warm-up") {
  AdaptiveRun run;
  run.planned_block_measured();
  SweepSummary planned;
  planned.variants_ran = {"baseline", "candidate"};
  SweepOptions opt;
  opt.quiet = true;
  CHECK(run_adaptive_blocks(run.dir, run.plan, run.workers, warmed_by(opt, planned)) == 3);
  CHECK(run.workers.started() == std::vector<std::string>{"m64/A3", "m64/B2", "m64/A4"});
}

TEST_CASE("adaptive sweep: a failed arm stops the extension, its failure recorded") {
  AdaptiveRun run;
  run.planned_block_measured();
  run.workers.endings["m64/B2"] = {exited(3), false, "abharness-worker: error: lost the GPU\n"};
  CHECK(run.extend() == 3);
  CHECK(run.workers.started().size() == 5);
  CHECK(read_json_file(log_path(run.dir, *run.plan.find_task("m64", "B2"),
                                "failure.json"))["reason"] == "exit code 3: lost the GPU");
}

TEST_CASE("adaptive sweep: without --until-decided nothing runs") {
  AdaptiveRun run;
  run.plan.schedule.until_decided = 0;
  run.planned_block_measured();
  CHECK(run.extend() == 0);
  CHECK(run.workers.log().empty());
}
