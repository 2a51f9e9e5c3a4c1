// The adaptive rule of --until-decided (report/adaptive.hpp): which conditional blocks run, from
// the results of the blocks before them.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "report/adaptive.hpp"
#include "report/report_builder.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

// Two shapes, one planned ABA block and two conditional ones. Shape 0: candidate 2x faster
// (decided even with shape 1's arm variation in its prior). Shape 1: candidate 10 % faster, but
// its first block's A2 is 5 % slower than A1: with one block the interval, which carries that
// disagreement, crosses the band, and the drift keeps the verdict from it (unstable).
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
  CHECK(b.waiting_at == 1);  // step 1 waits for the arms of block 1, which has not run
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

TEST_CASE("adaptive: with confirmation, a verdict on one candidate arm gets another block") {
  Plan p = adaptive_plan();
  p.schedule.confirm = true;
  AdaptiveBlocks b = adaptive_blocks(p, outcomes_through(p, 0));
  // Shape 0 is faster on its one B arm: confirmed by block 1; shape 1 is undecided: block 1.
  CHECK(b.required ==
        std::set<std::pair<std::string, int>>{{p.shapes[0].id, 1}, {p.shapes[1].id, 1}});
  REQUIRE(b.reasons.size() == 2);
  CHECK(b.reasons[0] ==
        p.shapes[0].id + " block 1: confirmation of faster on one candidate arm after blocks 0..0");
  // Once block 1 agrees, both shapes rest on two candidate arms: nothing more is called for.
  AdaptiveBlocks after = adaptive_blocks(p, outcomes_through(p, 1));
  CHECK(after.required == b.required);
  CHECK(after.waiting_at == -1);
}

TEST_CASE("adaptive: a GPU-timed verdict far beyond the decisive factor needs no confirmation") {
  Plan p = adaptive_plan();
  p.schedule.confirm = true;
  std::vector<ArmOutcome> out = outcomes_through(p, 0);
  for (auto& o : out) o.result->measurement.timer = "cupti";
  // Shape 0's candidate is 2x faster on its one B arm, timed by CUPTI: beyond 1.5x, decided.
  AdaptiveBlocks b = adaptive_blocks(p, out);
  CHECK(b.required == std::set<std::pair<std::string, int>>{{p.shapes[1].id, 1}});
  // With the factor off every one-arm verdict is confirmed, as on the CPU.
  p.schedule.decision.decisive_factor = 0;
  b = adaptive_blocks(p, out);
  CHECK(b.required ==
        std::set<std::pair<std::string, int>>{{p.shapes[0].id, 1}, {p.shapes[1].id, 1}});
  // A factor of 2.5 is beyond shape 0's 2x: confirmed.
  p.schedule.decision.decisive_factor = 2.5;
  CHECK(adaptive_blocks(p, out).required.count({p.shapes[0].id, 1}) == 1);
}

TEST_CASE("adaptive: a block waits while an arm before it has no valid result") {
  Plan p = adaptive_plan();
  std::vector<ArmOutcome> out = outcomes_through(p, 0);
  out[0].result.reset();
  out[0].failure = "exit code 3";
  AdaptiveBlocks b = adaptive_blocks(p, out);
  CHECK(b.waiting_at == 0);
  CHECK(b.required.empty());
  // Without --until-decided nothing is conditional.
  Plan plain = make_plan(2);
  CHECK(adaptive_blocks(plain, outcomes_through(plain, 0)).required.empty());
}

namespace {

// Measures, as the sweep would, every arm the rule puts in effect, step after step, until it
// calls for nothing more; `ns` gives each arm's median.
std::vector<ArmOutcome> sweep_until_decided(const Plan& p, double (*ns)(const Plan&, const Task&),
                                            AdaptiveBlocks& b) {
  std::vector<ArmOutcome> out;
  std::set<std::size_t> measured;
  for (;;) {
    b = adaptive_blocks(p, out);
    bool ran = false;
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (in_effect(p.tasks[i], b) && measured.insert(i).second) {
        out.push_back({p.tasks[i], make_result(p, p.tasks[i], ns(p, p.tasks[i]), i + 1), ""});
        ran = true;
      }
    if (!ran) return out;
  }
}

// Two planned blocks. Shape 0: candidate 2.5 % faster, its arms agree to 0.2 %: decided while
// the other shape's arms agree as well. Shape 1: candidate 1 % faster, on the band's edge
// (ambiguous) with quiet planned blocks; in each extra block its A arms sit 10 % apart, which
// widens the prior that shape 0's interval borrows from.
double noisy_neighbour(const Plan& p, const Task& t) {
  if (t.shape == p.shapes[0].id) return t.variant == "baseline" ? 10000 : 9750;
  if (t.variant == "candidate") return 9900;
  if (!t.conditional) return 10000;
  return (t.arm == "A1") == (t.round % 2 == 1) ? 9500 : 10500;
}

}  // namespace

TEST_CASE("adaptive: a shape decided early is judged again, and undecided gets its blocks") {
  Plan p = make_plan(2);
  p.schedule.rounds = 2;
  p.schedule.until_decided = 3;
  // The noisy shape's 5 % arm offsets would conflict with the quiet shape's prior and be left out
  // of it (robust_priors), and two such arms among four quiet ones would be left out of its own
  // estimate as disturbed (outlier_arms): with both checks off, its blocks widen that prior, which
  // is what makes the quiet shape undecided again here.
  p.schedule.decision.prior_conflict_level = 0;
  p.schedule.decision.outlier_arm_sigmas = 0;
  p.tasks = make_schedule(p.shapes, p.schedule);
  const std::string quiet = p.shapes[0].id, noisy = p.shapes[1].id;
  AdaptiveBlocks b;
  const std::vector<ArmOutcome> arms = sweep_until_decided(p, noisy_neighbour, b);
  CHECK(b.waiting_at == -1);
  // After the planned block the quiet shape is decided and only the noisy one gets a block ...
  std::vector<ArmOutcome> planned;
  for (const auto& o : arms)
    if (!o.task.conditional) planned.push_back(o);
  const Report first = build_report(p, planned, p.schedule.decision, "");
  CHECK(first.shapes[0].verdict == Verdict::faster);
  // ... whose blocks widen the pooled prior: the quiet shape, judged again, is undecided and gets
  // its own blocks, where the rule judging it once would have left it with none.
  // (Reasons come step by step, in plan order within a step: the first step gave shape 0 none.)
  REQUIRE(b.reasons.size() >= 2);
  CHECK(b.reasons[0] == noisy + " block 2: ambiguous after blocks 0..1");
  CHECK(b.reasons[1] == quiet + " block 2: ambiguous after blocks 0..1 (undecided again)");
  // In the run's final state, every shape left undecided has had all of its blocks.
  const Report last = build_report(p, arms, p.schedule.decision, "");
  for (const auto& row : last.shapes) {
    CAPTURE(row.shape);
    if (row.verdict != Verdict::unstable && row.verdict != Verdict::ambiguous) continue;
    for (int j = 2; j <= 4; ++j) CHECK(b.required.count({row.shape, j}) == 1);
  }
}

TEST_CASE("adaptive: with a variants file, one undecided candidate gives every variant a block") {
  // Baseline a, candidates fast and twin. Shape 0: both 2x faster, decided. Shape 1: the
  // baseline's A2 is 5 % slower than its A1; fast, 2x faster, is decided even so, twin (the
  // baseline's speed) is not: the shape's next block measures all three variants again.
  Plan p = make_plan(2);
  p.variants[0].name = "a";
  p.variants[1].name = "fast";
  Variant twin = p.variants[0];
  twin.name = "twin";
  p.variants.push_back(twin);
  p.schedule.until_decided = 2;
  p.tasks = make_schedule(p.shapes, p.schedule, {"a", "fast", "twin"});
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 0;
  for (const Task& t : p.tasks) {
    if (t.round > 0) continue;
    double ns = t.variant == "a" ? 10000 : 5000;
    if (t.shape == p.shapes[1].id && t.variant == "twin") ns = 10000;
    if (t.shape == p.shapes[1].id && t.arm == "a.2") ns = 10500;
    out.push_back({t, make_result(p, t, ns, ++seed), ""});
  }
  const AdaptiveBlocks b = adaptive_blocks(p, out);
  CHECK(b.required == std::set<std::pair<std::string, int>>{{p.shapes[1].id, 1}});
  REQUIRE(b.reasons.size() == 1);
  CHECK(b.reasons[0].rfind(p.shapes[1].id + " block 1: twin: ", 0) == 0);
  std::set<std::string> next;
  for (const Task& t : p.tasks)
    if (t.conditional && in_effect(t, b)) next.insert(t.arm);
  CHECK(next == std::set<std::string>{"a.3", "fast.2", "twin.2", "a.4"});
}

TEST_CASE("adaptive: futile_width says when all the blocks left could not decide a shape") {
  StatsOptions s;  // band 1 %, 95 %
  ShapeRow row;
  row.verdict = Verdict::ambiguous;
  row.arms = {ok_arm("A1", "baseline"), ok_arm("B", "candidate"), ok_arm("A2", "baseline")};
  row.variation = ArmVariation{1e-4, 14};
  row.ci = Interval{0.97, 1.03};
  // After one block never: its A1 and A2 may disagree by one disturbed arm.
  CHECK(!futile_width(row, 3, s));
  for (const char* name : {"A3", "B2", "A4"})
    row.arms.push_back(ok_arm(name, name[0] == 'B' ? "candidate" : "baseline", 0, 1));
  // An A/A at +-3 % after two blocks: two more are expected to leave about +-2 % (the arms'
  // term over twice the arms, a slightly smaller t), wider than the band: futile.
  const auto wide = futile_width(row, 2, s);
  REQUIRE(wide);
  const double t14 = 2.144787, t20 = 2.085963;  // t(0.975) at 14 and 14 + 6 degrees of freedom
  CHECK(*wide ==
        doctest::Approx(std::log(1.03 / 0.97) / 2 * t20 / t14 * std::sqrt(0.5)).epsilon(1e-6));
  // With one block left too; with none there is nothing to withhold.
  CHECK(futile_width(row, 1, s).has_value());
  CHECK(!futile_width(row, 0, s));
  // At +-1.5 % two blocks may bring it within the band; a change centred 5 % away may be
  // decided beyond it: neither is futile.
  row.ci = Interval{0.985, 1.015};
  CHECK(!futile_width(row, 2, s));
  row.ci = Interval{1.02, 1.08};
  CHECK(!futile_width(row, 2, s));
  // Without a between-arm estimate nothing can be scaled: never futile.
  row.ci = Interval{0.9, 1.1};
  row.variation.reset();
  CHECK(!futile_width(row, 3, s));
}

namespace {

// Two shapes whose arms of one build lie 6 % apart in every block: at a 1 % band no number of
// blocks decides them.
double wild(const Plan& p, const Task& t) {
  if (t.variant == "candidate") return 10300 + (t.shape == p.shapes[0].id ? 0 : 20);
  const bool second = std::stoi(t.arm.substr(1)) % 2 == 0;  // A2, A4, ...
  return second == (t.round % 2 == 0) ? 10600 : 10000;
}

}  // namespace

TEST_CASE("adaptive: with futility, a shape no block left could decide gets none, and says why") {
  Plan p = make_plan(2);
  p.schedule.until_decided = 3;
  p.tasks = make_schedule(p.shapes, p.schedule);
  AdaptiveBlocks b;
  sweep_until_decided(p, wild, b);
  CHECK(b.required.size() == 6);  // the rule of plans before it: every block of both shapes
  CHECK(b.withheld.empty());
  p.schedule.futility = true;
  sweep_until_decided(p, wild, b);
  // The first extra block always runs; after it, the two left could not decide either shape.
  CHECK(b.required ==
        std::set<std::pair<std::string, int>>{{p.shapes[0].id, 1}, {p.shapes[1].id, 1}});
  REQUIRE(b.withheld.size() == 2);
  CAPTURE(b.withheld[0]);
  CHECK(b.withheld[0].rfind(p.shapes[0].id + ": ambiguous after blocks 0..1, interval [", 0) == 0);
  CHECK(b.withheld[0].find("; after all 2 block(s) left still about +-") != std::string::npos);
}

namespace {

// An H200 A/A of the bf16 reference grid (16 cuBLASLt shapes, docs/measurements.md §49): each
// shape's arm medians in ns, block 0 (A1 B1 A2) then block 1 (A3 B2 A4). Four shapes' processes
// fell at two levels: m512_n6656 (204.5-210.3 us), m1_n19968 (66.4 / 68.2 us), m8_n19968 (67.9 /
// 68.7 us), m1024_n19968 (one arm 2 % fast). The others' arms agree to 0.0-0.4 %.
const double kH200Sweep[16][6] = {{66149, 66069, 66053, 66063, 66070, 66018},
                                  {70071, 69974, 70026, 70001, 70042, 70006},
                                  {70012, 69992, 70025, 70028, 70047, 70002},
                                  {77369, 77474, 77423, 77450, 77454, 77438},
                                  {207315, 204512, 209143, 208930, 210321, 207907},
                                  {386813, 385445, 386747, 386526, 385864, 387032},
                                  {736782, 736424, 738987, 736808, 737968, 736838},
                                  {1512155, 1518128, 1511890, 1511990, 1513300, 1515517},
                                  {66563, 68265, 66366, 66581, 68045, 68204},
                                  {67887, 68717, 67914, 68333, 67917, 68721},
                                  {65926, 65867, 65904, 65903, 65209, 65925},
                                  {68879, 68660, 68804, 68830, 68722, 68750},
                                  {180775, 180898, 180983, 180763, 181066, 180988},
                                  {348994, 341937, 348679, 347583, 348429, 348747},
                                  {715955, 716088, 713732, 715702, 716102, 715846},
                                  {1417311, 1418136, 1418158, 1417932, 1418888, 1417543}};

// A sweep of the 16-shape reference grid under --until-decided, as the GPU sweeps ran.
Plan sweep_plan(bool median_reference = true) {
  Plan p = make_plan(16);
  p.schedule.until_decided = 3;
  p.schedule.confirm = p.schedule.futility = true;
  p.schedule.decision.prior_conflict_median = median_reference;
  p.tasks = make_schedule(p.shapes, p.schedule);
  return p;
}

// Task t's outcome from a sweep's arm medians (per shape: block 0's A1 B1 A2, then block 1's A3
// B2 A4; 0: that arm did not run), timed by CUPTI as those arms were; none past block 1 or where
// the arm did not run.
std::optional<ArmOutcome> sweep_outcome(const Plan& p, const Task& t, const double (&sweep)[16][6],
                                        std::uint64_t seed) {
  const auto shape = &p.shape(t.shape) - p.shapes.data();
  const int slot = t.arm == "A1" || t.arm == "A3" ? 0 : t.variant == "candidate" ? 1 : 2;
  if (t.round > 1 || sweep[shape][3 * t.round + slot] == 0) return std::nullopt;
  ArmOutcome o{t, make_result(p, t, sweep[shape][3 * t.round + slot], seed), ""};
  o.result->measurement.timer = "cupti";
  return o;
}

// The shapes the rule gives block 1, stepping as the sweep would through the blocks measured.
std::set<int> given_block_1(bool median_reference) {
  const Plan p = sweep_plan(median_reference);
  std::vector<ArmOutcome> out;
  std::set<std::size_t> measured;
  AdaptiveBlocks b;
  for (bool ran = true; ran;) {
    b = adaptive_blocks(p, out);
    ran = false;
    for (std::size_t i = 0; i < p.tasks.size(); ++i) {
      const Task& t = p.tasks[i];
      if (t.round > 1 || !in_effect(t, b) || !measured.insert(i).second) continue;
      out.push_back(*sweep_outcome(p, t, kH200Sweep, i + 1));
      ran = true;
    }
  }
  std::set<int> shapes;
  for (const auto& [shape, block] : b.required)
    if (block == 1) shapes.insert(static_cast<int>(&p.shape(shape) - p.shapes.data()));
  return shapes;
}

}  // namespace

TEST_CASE("adaptive: shapes whose processes fall at two levels give the quiet ones no block") {
  // Tested against the pooled prior, the two-level shapes widen it for every quiet shape, which
  // is given a block it does not need (on the H200: thirteen shapes, 45 more arms).
  const std::set<int> pooled = given_block_1(false);
  int quiet_pooled = 0;
  for (int s : pooled) quiet_pooled += !(s == 4 || s == 8 || s == 9 || s == 13);
  CHECK(quiet_pooled >= 10);
  // Against the median of the other shapes, the two-level shapes are found and borrow from one
  // another: they get their blocks, the quiet shapes none.
  CHECK(given_block_1(true) == std::set<int>{4, 8, 9, 13});
}

namespace {

// An H100 A/A of the same grid (docs/measurements.md §52, its first sweep): each shape's arm
// medians in ns, block 0 (A1 B1 A2) and, where the rule gave one, block 1 (A3 B2 A4; 0: not run).
// m32_n19968's processes read at two levels 5 % apart: A 100.6, 100.5, 95.6, 100.6 us; B 95.9,
// 95.8 us.
const double kH100Sweep[16][6] = {{93684, 93677, 93681, 0, 0, 0},
                                  {98341, 98410, 98405, 0, 0, 0},
                                  {99461, 99476, 99508, 0, 0, 0},
                                  {107168, 107292, 107242, 0, 0, 0},
                                  {192570, 193383, 190053, 192761, 192409, 191333},
                                  {378987, 377852, 378510, 0, 0, 0},
                                  {758838, 757203, 760251, 0, 0, 0},
                                  {1465162, 1467165, 1464411, 0, 0, 0},
                                  {93796, 93678, 93732, 0, 0, 0},
                                  {96146, 95020, 95366, 96063, 94784, 95084},
                                  {100565, 95878, 100474, 95571, 95840, 100564},
                                  {100204, 99008, 100529, 98956, 99003, 99223},
                                  {191855, 192301, 191961, 0, 0, 0},
                                  {352845, 352832, 353098, 0, 0, 0},
                                  {719454, 718014, 719304, 0, 0, 0},
                                  {1427097, 1427029, 1426479, 0, 0, 0}};

Report h100_sweep_report(bool own_floor) {
  const Plan p = sweep_plan();
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 0;
  for (const Task& t : p.tasks)
    if (auto o = sweep_outcome(p, t, kH100Sweep, ++seed)) out.push_back(std::move(*o));
  StatsOptions opt;
  opt.prior_conflict_own_floor = own_floor;
  return build_report(p, out, opt, "digest");
}

}  // namespace

TEST_CASE("report: a shape found at two levels borrows no narrower spread than its own") {
  // Borrowing the spread of m8_n19968, whose arms sit 1 % apart, m32_n19968 was called `faster`
  // on an identical build, [1.013, 1.061] on the H100.
  const Report narrowed = h100_sweep_report(false);
  REQUIRE(narrowed.shapes[10].prior_conflict);
  CHECK(narrowed.shapes[10].verdict == Verdict::faster);
  // Floored at its own spread it keeps its peers' degrees of freedom: its interval holds 1.
  const Report floored = h100_sweep_report(true);
  const ShapeRow& m32 = floored.shapes[10];
  CHECK(m32.prior_conflict);
  CHECK(m32.verdict == Verdict::ambiguous);
  CHECK(m32.ci->lo < 1);
  CHECK(m32.variation->variance >= m32.own_variation->variance);
  // The quiet shapes are judged as before.
  for (int s : {0, 1, 2, 3, 5, 6, 7, 8, 12, 13, 14, 15})
    CHECK(floored.shapes[s].verdict == narrowed.shapes[s].verdict);
}
