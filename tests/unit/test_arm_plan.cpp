// One arm's view of a plan (model/arm_plan.hpp): for every arm of a plan written by write_plan it
// is the whole plan's header with that arm's shape and task, found without parsing the rest; a
// plan whose bytes are not the checked ones is refused; an arm the plan does not have, or a plan
// laid out otherwise, is left to the whole read, with the reason.
#include <doctest/doctest.h>

#include <fstream>

#include "model/arm_plan.hpp"
#include "plan_fixture.hpp"
#include "system/error.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

// A plan of shapes whose ids are prefixes of one another (s1, s10, s11, ...), labelled and
// sharded over two lanes, written by write_plan.
Plan written_plan(const fs::path& dir, int shapes) {
  Plan p = test::fixture_plan(2);
  p.shapes.clear();
  for (int i = 0; i < shapes; ++i)
    p.shapes.push_back(Shape{"s" + std::to_string(i), i % 3 ? "" : "fc1 fprop",
                             json{{"m", i}, {"id", "x"}}, "kernel"});
  p.tasks = make_schedule(p.shapes, p.schedule);
  for (auto& t : p.tasks) t.cpus = {2 * t.gpu + 1, 2 * t.gpu};
  write_plan(dir, p);
  return load_plan(dir);
}

// The whole plan as one arm sees it: its header, and of the shapes and tasks only the arm's.
json arm_view(Plan whole, const Task& t) {
  whole.shapes = {whole.shape(t.shape)};
  whole.tasks = {t};
  return to_json(whole);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("arm plan: every arm reads the whole plan's header, its shape and its task") {
  test::TempDir tmp;
  const Plan whole = written_plan(tmp.path(), 24);
  for (const Task& t : whole.tasks) {
    const ArmPlanRead r = load_arm_plan(tmp.path(), t.shape, t.arm, whole.file_sha256);
    REQUIRE_MESSAGE(r.plan, r.why_not);
    CHECK(r.why_not.empty());
    CHECK(r.bytes == fs::file_size(plan_path(tmp.path())));
    CHECK(r.plan->file_sha256 == whole.file_sha256);
    REQUIRE(r.plan->tasks.size() == 1);
    CHECK(r.plan->tasks[0] == t);
    CHECK(r.plan->shapes[0] == whole.shape(t.shape));
    CHECK(to_json(*r.plan) == arm_view(whole, t));
  }
}

TEST_CASE("arm plan: bytes other than the checked ones are refused as a changed plan") {
  test::TempDir tmp;
  const Plan whole = written_plan(tmp.path(), 3);
  const std::string other = sha256_hex("another plan");
  const std::string msg = test::error_of([&] { load_arm_plan(tmp.path(), "s1", "A1", other); });
  CHECK(msg.find("plan-digest: expected " + other) != std::string::npos);
  CHECK(msg.find("found " + whole.file_sha256) != std::string::npos);
  CHECK_THROWS_AS(load_arm_plan(tmp.path(), "s1", "A1", other), ProvenanceError);
}

TEST_CASE("arm plan: an arm or shape the plan does not have is left to the whole read") {
  test::TempDir tmp;
  const Plan whole = written_plan(tmp.path(), 12);
  for (const auto& [shape, arm] : {std::pair{"s1", "A3"}, std::pair{"s12", "A1"},
                                   std::pair{"s", "A1"}, std::pair{"x", "A1"}}) {
    const ArmPlanRead r = load_arm_plan(tmp.path(), shape, arm, whole.file_sha256);
    CHECK(!r.plan);
    CHECK(r.why_not.find(std::string("no task and shape of ") + shape + "/" + arm) == 0);
  }
}

TEST_CASE("arm plan: a plan laid out otherwise than write_plan lays it out is read whole") {
  test::TempDir tmp;
  const Plan whole = written_plan(tmp.path(), 4);
  // The same document, compact: valid, and with its own digest, but not the layout searched for.
  json j = to_json(whole);
  j["payload_sha256"] = plan_payload_digest(j);
  const std::string compact = j.dump() + "\n";
  write_text(plan_path(tmp.path()), compact);
  const ArmPlanRead r = load_arm_plan(tmp.path(), "s1", "A1", sha256_hex(compact));
  CHECK(!r.plan);
  CHECK(r.why_not == "its \"shapes\" and \"tasks\" are not laid out as abharness writes them");
  CHECK(load_plan(tmp.path()).find_task("s1", "A1") != nullptr);
}

TEST_CASE("arm plan: a plan without shapes or tasks has no arm to find") {
  test::TempDir tmp;
  Plan p = test::fixture_plan(2);
  p.shapes.clear();
  p.tasks.clear();
  write_plan(tmp.path(), p);
  const ArmPlanRead r = load_arm_plan(tmp.path(), "m32", "A1", sha256_file(plan_path(tmp.path())));
  CHECK(!r.plan);
  CHECK(r.why_not.find("no task and shape of m32/A1") == 0);
}
