// The plan's index by name: every lookup gives what a scan of the plan gives (Plan::shape,
// Plan::find_task, the tasks of a shape in plan order), unknown names give nothing, and a task
// planned twice is found, with plan_from_json's refusal worded as before.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/plan_index.hpp"
#include "plan_fixture.hpp"
#include "test_support.hpp"

using namespace abh;

namespace {

// A plan of `n` shapes under ABBA with two blocks, sharded over two lanes: shape ids that are
// prefixes of one another (s1, s10, s100) and several tasks per shape.
Plan many_shapes(int n) {
  Plan p = test::fixture_plan(2);
  p.shapes.clear();
  for (int i = 0; i < n; ++i)
    p.shapes.push_back(Shape{"s" + std::to_string(i), "", json{{"m", i}}, "kernel"});
  p.schedule.name = "abba";
  p.schedule.rounds = 2;
  p.tasks = make_schedule(p.shapes, p.schedule);
  for (auto& t : p.tasks) t.cpus = {2 * t.gpu + 1};
  return p;
}

// The tasks of a shape as a scan of the plan finds them.
std::vector<const Task*> scanned_tasks_of(const Plan& p, const std::string& shape) {
  std::vector<const Task*> out;
  for (const auto& t : p.tasks)
    if (t.shape == shape) out.push_back(&t);
  return out;
}

std::string plan_error(const json& j) {
  return test::error_of([&] { plan_from_json(j, "plan.json"); });
}

}  // namespace

TEST_CASE("plan index: every lookup gives what a scan of the plan gives") {
  const Plan p = many_shapes(150);
  const PlanIndex index(p);
  CHECK(&index.plan() == &p);
  for (const auto& s : p.shapes) {
    REQUIRE(index.shape(s.id) != nullptr);
    CHECK(index.shape(s.id) == &p.shape(s.id));
    std::vector<const Task*> indexed;
    for (std::size_t i : index.tasks_of(s.id)) indexed.push_back(&p.tasks[i]);
    CHECK(indexed == scanned_tasks_of(p, s.id));
    CHECK(indexed.size() == 8);  // ABBA, two blocks
  }
  for (const auto& t : p.tasks) CHECK(index.task(t.shape, t.arm) == p.find_task(t.shape, t.arm));
  CHECK(!index.duplicate());
}

TEST_CASE("plan index: unknown shapes and arms give nothing") {
  const Plan p = many_shapes(12);
  const PlanIndex index(p);
  CHECK(index.shape("s12") == nullptr);
  CHECK(index.shape("") == nullptr);
  CHECK(index.task("s1", "A9") == nullptr);
  CHECK(index.task("s12", "A1") == nullptr);
  // The shape and the arm are not interchangeable, nor joined into one name.
  CHECK(index.task("A1", "s1") == nullptr);
  CHECK(index.task("s1A", "1") == nullptr);
  CHECK(index.tasks_of("s12").empty());
}

TEST_CASE("plan index: a task planned twice is the earliest repeat, after its first") {
  Plan p = test::fixture_plan(2);  // m32: A1 B A2 (tasks 0-2), m64: A1 B A2 (tasks 3-5)
  SUBCASE("one repeat") {
    p.tasks[5].arm = "A1";
    const PlanIndex index(p);
    REQUIRE(index.duplicate());
    CHECK(index.duplicate()->first == 3);
    CHECK(index.duplicate()->again == 5);
    CHECK(index.task("m64", "A1") == &p.tasks[3]);  // the first, as find_task finds it
  }
  SUBCASE("three of one arm, and a later repeat of another") {
    p.tasks[1].arm = "A1";
    p.tasks[2].arm = "A1";
    p.tasks[5].arm = "A1";
    const PlanIndex index(p);
    REQUIRE(index.duplicate());
    CHECK(index.duplicate()->first == 0);
    CHECK(index.duplicate()->again == 1);
  }
}

TEST_CASE("plan index: a duplicate shape id looks up its first shape, as a scan does") {
  Plan p = test::fixture_plan(2);
  p.shapes.push_back(Shape{"m32", "again", json{{"m", 33}}, "kernel"});
  const PlanIndex index(p);
  CHECK(index.shape("m32") == &p.shapes[0]);
  CHECK(index.shape("m32") == &p.shape("m32"));
}

TEST_CASE("plan index: plan_from_json refuses a duplicate task and an unknown shape as before") {
  json j = to_json(test::fixture_plan(2));
  SUBCASE("a task planned twice names both places") {
    j["tasks"][5]["arm"] = "A1";
    CHECK(plan_error(j) == "plan.json.tasks[5]: arm m64/A1 is planned twice (also tasks[3])");
  }
  SUBCASE("the earliest of several repeats is the one named") {
    j["tasks"][2]["arm"] = "A1";
    j["tasks"][4]["arm"] = "A1";
    j["tasks"][5]["arm"] = "A1";
    CHECK(plan_error(j) == "plan.json.tasks[2]: arm m32/A1 is planned twice (also tasks[0])");
  }
  SUBCASE("a task of a shape the plan does not have") {
    j["tasks"][4]["shape"] = "m640";
    CHECK(plan_error(j) == "plan run-1 has no shape 'm640'");
  }
  SUBCASE("a large plan with one repeat at its end") {
    Plan p = many_shapes(2000);
    p.tasks.back().arm = p.tasks[p.tasks.size() - 2].arm;
    const std::string last = std::to_string(p.tasks.size() - 1);
    const std::string before = std::to_string(p.tasks.size() - 2);
    CHECK(plan_error(to_json(p)) == "plan.json.tasks[" + last + "]: arm s1999/" +
                                        p.tasks.back().arm + " is planned twice (also tasks[" +
                                        before + "])");
  }
}
