// The adaptive rule of --until-decided (report/adaptive.hpp): which conditional blocks run, from
// the results of the blocks before them.
#include <doctest/doctest.h>

#include "report/adaptive.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

// Two shapes, one planned ABA block and two conditional ones. Shape 0: candidate 2x faster
// (decided even with shape 1's arm variation in its prior). Shape 1: candidate 10 % faster, but
// its first block's A2 is 5 % slower than A1 (unstable).
Plan adaptive_plan() {
  Plan p = make_plan(2);
  p.schedule.until_decided = 2;
  p.tasks = make_schedule(p.shapes, p.schedule);
  return p;
}

std::vector<ArmOutcome> outcomes_through(const Plan& p, int last_block) {
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 0;
  for (const Task& t : p.tasks) {
    if (t.round > last_block) continue;
    double ns = t.variant == "baseline" ? 10000 : (t.shape == p.shapes[0].id ? 5000 : 9000);
    if (t.shape == p.shapes[1].id && t.round == 0 && t.arm == "A2") ns = 10500;
    out.push_back({t, make_result(p, t, ns, ++seed), ""});
  }
  return out;
}

}  // namespace

TEST_CASE("adaptive: the plan lists every conditional block up front") {
  Plan p = adaptive_plan();
  CHECK(p.tasks.size() == 2 * 3 * 3);
  int conditional = 0;
  for (const Task& t : p.tasks) conditional += t.conditional;
  CHECK(conditional == 2 * 2 * 3);
  CHECK(!p.tasks[0].conditional);
  CHECK(p.tasks[3].conditional);
  CHECK(p.tasks[3].round == 1);
}

TEST_CASE("adaptive: an undecided shape gets the next block, a decided one does not") {
  Plan p = adaptive_plan();
  AdaptiveBlocks b = adaptive_blocks(p, outcomes_through(p, 0));
  CHECK(b.waiting_at == 2);  // block 2 waits for the arms of block 1, which has not run
  CHECK(b.required == std::set<std::pair<std::string, int>>{{p.shapes[1].id, 1}});
  REQUIRE(b.reasons.size() == 1);
  CHECK(b.reasons[0] == p.shapes[1].id + " block 1: unstable after blocks 0..0");
  for (const Task& t : p.tasks)
    CHECK(in_effect(t, b) == (!t.conditional || (t.shape == p.shapes[1].id && t.round == 1)));

  // Block 1 decides shape 1 (every later arm agrees): block 2 is not called for.
  std::vector<ArmOutcome> all = outcomes_through(p, 1);
  std::vector<ArmOutcome> ran;
  for (auto& o : all)
    if (in_effect(o.task, b)) ran.push_back(o);
  AdaptiveBlocks after = adaptive_blocks(p, ran);
  CHECK(after.required == b.required);
  CHECK(after.waiting_at == -1);
}

TEST_CASE("adaptive: a block waits while an arm before it has no valid result") {
  Plan p = adaptive_plan();
  std::vector<ArmOutcome> out = outcomes_through(p, 0);
  out[0].result.reset();
  out[0].failure = "exit code 3";
  AdaptiveBlocks b = adaptive_blocks(p, out);
  CHECK(b.waiting_at == 1);
  CHECK(b.required.empty());
  // Without --until-decided nothing is conditional.
  Plan plain = make_plan(2);
  CHECK(adaptive_blocks(plain, outcomes_through(plain, 0)).required.empty());
}
