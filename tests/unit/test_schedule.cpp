// The order of arms: each registered schedule's blocks, arm names, rounds, GPU sharding, the
// seeded random order, and the usage errors of a bad schedule.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "model/schedule.hpp"
#include "system/error.hpp"

using namespace abh;

namespace {

std::vector<Shape> shapes(int n) {
  std::vector<Shape> out;
  for (int i = 0; i < n; ++i)
    out.push_back(Shape{"s" + std::to_string(i), "", json{{"m", i}}, "kernel"});
  return out;
}

// "shape:arm/variant/round/gpu" for every task, to compare whole schedules at a glance.
std::vector<std::string> describe(const std::vector<Task>& tasks) {
  std::vector<std::string> out;
  for (const auto& t : tasks)
    out.push_back(t.shape + ":" + t.arm + "/" + t.variant + "/" + std::to_string(t.round) + "/" +
                  std::to_string(t.gpu));
  return out;
}

std::string arms_of(const std::vector<Task>& tasks, const std::string& shape) {
  std::string s;
  for (const auto& t : tasks)
    if (t.shape == shape) s += (s.empty() ? "" : " ") + t.arm;
  return s;
}

}  // namespace

TEST_CASE("schedule: ABA runs A1, B, A2 per shape, shape after shape") {
  auto tasks = make_schedule(shapes(2), {});
  CHECK(describe(tasks) == std::vector<std::string>{"s0:A1/baseline/0/0", "s0:B/candidate/0/0",
                                                    "s0:A2/baseline/0/0", "s1:A1/baseline/0/0",
                                                    "s1:B/candidate/0/0", "s1:A2/baseline/0/0"});
}

TEST_CASE("schedule: ABBA numbers both B arms, rounds number the arms on") {
  ScheduleOptions abba;
  abba.name = "abba";
  CHECK(arms_of(make_schedule(shapes(1), abba), "s0") == "A1 B1 B2 A2");
  ScheduleOptions aba2;
  aba2.rounds = 2;
  auto tasks = make_schedule(shapes(1), aba2);
  CHECK(arms_of(tasks, "s0") == "A1 B1 A2 A3 B2 A4");
  CHECK(tasks[3].round == 1);
  CHECK(tasks[4].variant == "candidate");
}

TEST_CASE("schedule: shapes are sharded round-robin and a shape's arms share one GPU") {
  ScheduleOptions o;
  o.gpus = 2;
  auto tasks = make_schedule(shapes(3), o);
  REQUIRE(tasks.size() == 9);
  for (const auto& t : tasks) CHECK(t.gpu == (t.shape == "s1" ? 1 : 0));
}

TEST_CASE("schedule: the random order is AB or BA per block, fixed by its seed") {
  ScheduleOptions o;
  o.name = "random";
  o.rounds = 16;
  o.seed = 7;
  auto a = make_schedule(shapes(2), o);
  CHECK(describe(a) == describe(make_schedule(shapes(2), o)));
  REQUIRE(a.size() == 64);
  int ab = 0;
  for (size_t i = 0; i < a.size(); i += 2) {
    CHECK(a[i].round == a[i + 1].round);
    CHECK(a[i].variant != a[i + 1].variant);
    ab += a[i].variant == "baseline" ? 1 : 0;
  }
  // 32 blocks, each AB or BA: both orders occur (all 32 alike has probability 2^-31).
  CHECK(ab > 0);
  CHECK(ab < 32);
  o.seed = 8;
  CHECK(describe(make_schedule(shapes(2), o)) != describe(a));
}

TEST_CASE("schedule: names are listed and bad options are usage errors naming the flag") {
  CHECK(schedule_names() == std::vector<std::string>{"aba", "abba", "random"});
  ScheduleOptions o;
  o.name = "abab";
  CHECK_THROWS_WITH_AS(make_schedule(shapes(1), o),
                       "--schedule 'abab' is unknown: use one of aba, abba, random", UsageError);
  o = {};
  o.rounds = 0;
  CHECK_THROWS_WITH_AS(make_schedule(shapes(1), o), "--rounds must be >= 1", UsageError);
  o = {};
  o.gpus = 0;
  CHECK_THROWS_WITH_AS(make_schedule(shapes(1), o), "--gpus must name at least one GPU",
                       UsageError);
  o = {};
  o.until_decided = -1;
  CHECK_THROWS_WITH_AS(make_schedule(shapes(1), o), "--until-decided must be >= 0", UsageError);
  // One random block gives one arm per variant: the variation between arms has no estimate.
  o = {};
  o.name = "random";
  CHECK_THROWS_WITH_AS(make_schedule(shapes(1), o), doctest::Contains("use --rounds 2 or more"),
                       UsageError);
}

TEST_CASE("schedule: --until-decided appends conditional blocks that number the arms on") {
  ScheduleOptions o;
  o.until_decided = 2;
  auto t = make_schedule(shapes(1), o);
  REQUIRE(t.size() == 9);
  std::string arms;
  for (const auto& x : t) {
    arms += x.arm + " ";
    CHECK(x.conditional == (x.round >= 1));
  }
  CHECK(arms == "A1 B1 A2 A3 B2 A4 A5 B3 A6 ");
  CHECK(t[8].round == 2);
}

TEST_CASE("schedule: start_ahead is in the JSON, and a schedule written before it reads as 0") {
  ScheduleOptions o;
  o.start_ahead = 4;
  const json j = to_json(o);
  CHECK(j.at("start_ahead") == 4);
  CHECK(schedule_options_from_json(j, "plan.json: schedule").start_ahead == 4);
  json old = j;
  old.erase("start_ahead");
  CHECK(schedule_options_from_json(old, "plan.json: schedule").start_ahead == 0);
}

TEST_CASE("schedule: a variants file's blocks measure every variant, the baseline first and last") {
  const std::vector<std::string> abc{"o2", "o3", "pr"};
  CHECK(arms_of(make_schedule(shapes(1), {}, abc), "s0") == "o2.1 o3.1 pr.1 o2.2");
  ScheduleOptions abba;
  abba.name = "abba";
  CHECK(arms_of(make_schedule(shapes(1), abba, abc), "s0") == "o2.1 o3.1 pr.1 pr.2 o3.2 o2.2");
  ScheduleOptions two;
  two.rounds = 2;
  two.until_decided = 1;
  const auto tasks = make_schedule(shapes(1), two, abc);
  CHECK(arms_of(tasks, "s0") == "o2.1 o3.1 pr.1 o2.2 o2.3 o3.2 pr.2 o2.4 o2.5 o3.3 pr.3 o2.6");
  CHECK(tasks[8].conditional);
  CHECK(tasks[8].round == 2);
  CHECK_FALSE(tasks[7].conditional);
  CHECK(tasks[5].variant == "o3");
}

TEST_CASE("schedule: a variants file's random blocks are seeded orders of every variant") {
  const std::vector<std::string> abcd{"a", "b", "c", "d"};
  ScheduleOptions r;
  r.name = "random";
  r.rounds = 6;
  r.seed = 7;
  const auto tasks = make_schedule(shapes(1), r, abcd);
  REQUIRE(tasks.size() == 24);
  CHECK(describe(tasks) == describe(make_schedule(shapes(1), r, abcd)));
  bool varied = false;
  for (std::size_t b = 0; b < 6; ++b) {
    std::set<std::string> in_block;
    for (std::size_t i = 0; i < 4; ++i) in_block.insert(tasks[b * 4 + i].variant);
    CHECK(in_block.size() == 4);
    varied = varied || tasks[b * 4].variant != "a";
  }
  CHECK(varied);
  r.rounds = 1;
  CHECK_THROWS_AS(make_schedule(shapes(1), r, abcd), UsageError);
}
