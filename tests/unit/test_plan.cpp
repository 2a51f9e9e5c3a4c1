// The plan document: its JSON mapping, what plan_from_json refuses (each error names the file and
// the field), the lookups, and where an arm's files live in a run directory.
#include <doctest/doctest.h>

#include "model/plan.hpp"
#include "plan_fixture.hpp"
#include "system/error.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

std::string error_from(const json& j) {
  return test::error_of([&] { plan_from_json(j, "plan.json"); });
}

}  // namespace

TEST_CASE("plan: JSON round-trips every field") {
  Plan p = test::fixture_plan(2);
  json j = to_json(p);
  Plan back = plan_from_json(j, "plan.json");
  CHECK(to_json(back) == j);
  CHECK(back.shapes == p.shapes);
  CHECK(back.tasks == p.tasks);
  CHECK(back.machine == p.machine);
  CHECK(back.settings == p.settings);
  CHECK(back.command == p.command);
  CHECK(back.schedule.gpus == 2);
}

TEST_CASE("plan: a document of another schema is refused with the fix") {
  json j = to_json(test::fixture_plan(2));
  j["schema_version"] = kPlanSchemaVersion + 1;
  const std::string msg = error_from(j);
  CHECK(msg.rfind(
            "plan.json: field 'schema_version': found " + std::to_string(kPlanSchemaVersion + 1),
            0) == 0);
  CHECK(msg.find("with the abharness that wrote it") != std::string::npos);
  CHECK(msg.find("reads plan schema 2 to 3") != std::string::npos);
  // Plans of schema 2, written before variants files, are read as before.
  j["schema_version"] = kOldestPlanSchemaVersion;
  CHECK(plan_from_json(j, "plan.json").schema_version == 2);
  j["schema_version"] = kOldestPlanSchemaVersion - 1;
  CHECK_THROWS(plan_from_json(j, "plan.json"));
}

TEST_CASE("plan: tasks must name a machine entry, a variant and a shape of the plan") {
  json j = to_json(test::fixture_plan(2));
  SUBCASE("a GPU index beyond the machine") {
    j["tasks"][0]["gpu"] = 2;
    CHECK(error_from(j) ==
          "plan.json: task m32/A1 names machine entry 2 that the plan does not have");
  }
  SUBCASE("an unknown variant") {
    j["tasks"][1]["variant"] = "other";
    CHECK(error_from(j) == "plan run-1 has no variant 'other'");
  }
  SUBCASE("an unknown shape") {
    j["tasks"][1]["shape"] = "m3";
    CHECK(error_from(j) == "plan run-1 has no shape 'm3'");
  }
  SUBCASE("an arm name that could escape the run directory") {
    j["tasks"][0]["arm"] = "../A1";
    CHECK(error_from(j).rfind("plan.json.tasks[0]: arm '../A1' ", 0) == 0);
  }
}

TEST_CASE("plan: ill-typed fields name where they are") {
  json j = to_json(test::fixture_plan(2));
  SUBCASE("device") {
    j["variants"][1]["device"] = "tpu";
    CHECK(error_from(j) == "plan.json.variants[1]: field 'device': 'tpu' is neither cpu nor cuda");
  }
  SUBCASE("a library version") {
    j["variants"][0]["libraries"]["kernel"] = 13;
    CHECK(error_from(j) == "plan.json.variants[0].libraries: field 'kernel': expected a string");
  }
  SUBCASE("a recipe argv item") {
    j["variants"][0]["recipe"]["argv"][1] = 5;
    CHECK(error_from(j) ==
          "plan.json.variants[0].recipe: field 'argv[1]': expected a string, found 5");
  }
  SUBCASE("the command") {
    j["command"] = {"abharness", 1};
    CHECK(error_from(j) == "plan.json: field 'command[1]': expected a string, found 1");
  }
  SUBCASE("tasks not an array") {
    j["tasks"] = json::object();
    CHECK(error_from(j) == "plan.json: field 'tasks': expected an array");
  }
}

TEST_CASE("plan: lookups by name and the files of an arm") {
  Plan p = test::fixture_plan(2);
  CHECK(p.variant("candidate").name == "candidate");
  CHECK(p.shape("m64").params == json{{"m", 64}});
  CHECK_THROWS_WITH_AS(p.shape("m9"), "plan run-1 has no shape 'm9'", Error);
  REQUIRE(p.find_task("m64", "B") != nullptr);
  CHECK(p.find_task("m64", "B")->gpu == 1);
  CHECK(p.find_task("m64", "A3") == nullptr);
  const Task& t = *p.find_task("m32", "A2");
  CHECK(result_path("/runs/r1", t) == fs::path("/runs/r1/results/m32/A2.json"));
  CHECK(log_path("/runs/r1", t, "failure.json") == fs::path("/runs/r1/logs/m32/A2.failure.json"));
  CHECK(plan_path("/runs/r1") == fs::path("/runs/r1/plan.json"));
}

TEST_CASE("plan: the payload digest is of the canonical plan without its digest field") {
  Plan p = test::fixture_plan(2);
  p.shapes[0].label = "fc1 \"quoted\" \u00e9\\";  // keys and values escaped as canonical() does
  json j = to_json(p);
  j["a \"key\""] = json{{"z", 1}, {"a", {1.5, nullptr, "x"}}};
  const std::string without = sha256_hex(canonical(j));
  CHECK(plan_payload_digest(j) == without);
  j["payload_sha256"] = without;
  CHECK(plan_payload_digest(j) == without);
  j["payload_sha256"] = "anything else";
  CHECK(plan_payload_digest(j) == without);
  CHECK(plan_payload_digest(json::array({1, 2})) == sha256_hex(canonical(json::array({1, 2}))));
}

TEST_CASE("plan: load_plan reads plan.json and refuses a directory without one") {
  test::TempDir tmp;
  const std::string not_a_run =
      tmp.path().string() + " is not an abharness run directory (no plan.json)";
  CHECK_THROWS_WITH_AS(load_plan(tmp.path()), not_a_run.c_str(), UsageError);
  write_plan(tmp.path(), test::fixture_plan(2));
  const Plan back = load_plan(tmp.path());
  CHECK(to_json(back) == to_json(test::fixture_plan(2)));
  CHECK(back.file_sha256 == sha256_file(plan_path(tmp.path())));
}

TEST_CASE("plan: plan_bytes_of counts each task and shape as plan.json holds it") {
  test::TempDir tmp;
  const Plan full = test::fixture_plan(2);
  std::uintmax_t tasks = 0, shapes = 0;
  for (const Task& t : full.tasks) tasks += plan_bytes_of(t);
  for (const Shape& s : full.shapes) shapes += plan_bytes_of(s);
  Plan bare = full;
  bare.tasks.clear();
  write_plan(tmp.path(), bare);
  const auto without_tasks = fs::file_size(plan_path(tmp.path()));
  write_plan(tmp.path(), full);
  const auto with_tasks = fs::file_size(plan_path(tmp.path()));
  // "[]" became "[\n" + the tasks + "\n  ]", the last without its ",\n" separator.
  CHECK(with_tasks - without_tasks == tasks + 2);
  bare.shapes = {full.shapes[0]};
  bare.tasks.clear();
  write_plan(tmp.path(), bare);
  CHECK(without_tasks - fs::file_size(plan_path(tmp.path())) == plan_bytes_of(full.shapes[1]));
  CHECK(shapes > plan_bytes_of(full.shapes[1]));
}

TEST_CASE("plan: write_plan refuses, writing nothing, a plan larger than its reader accepts") {
  test::TempDir tmp;
  Plan p = test::fixture_plan(2);
  p.shapes[0].params["blob"] = std::string(kPlanMaxBytes, 'x');
  const std::string msg = test::error_of([&] { write_plan(tmp.path(), p); });
  CHECK(msg.rfind("the plan of " + std::to_string(p.tasks.size()) + " tasks would be ", 0) == 0);
  CHECK(msg.find("more than the " + std::to_string(kPlanMaxBytes) +
                 " its readers accept; nothing was written") != std::string::npos);
  CHECK_FALSE(fs::exists(plan_path(tmp.path())));
}

namespace {

// The fixture plan with both variants Python plugins and the interpreter they run under.
Plan python_plan() {
  Plan p = test::fixture_plan();
  for (auto& v : p.variants) {
    v.recipe.argv.clear();
    v.recipe.artifact.clear();
    v.recipe.env.clear();
    v.recipe.python = PythonPlugin{"bench.matmul", "make_problem", "cpu", ""};
    v.plugin = "variants/" + v.name + "/src";
    v.build_cache_key.clear();
  }
  const Interpreter py = test::fixture_interpreter();
  p.python = py;
  return p;
}

}  // namespace

TEST_CASE("plan: a Python plugin's variants and interpreter round-trip") {
  const Plan p = python_plan();
  const json j = to_json(p);
  CHECK(j["variants"][0]["recipe"]["python"]["module"] == "bench.matmul");
  CHECK(j["python"]["distributions"] == json::array({"numpy==1.24.2"}));
  const Plan back = plan_from_json(j, "plan.json");
  CHECK(to_json(back) == j);
  CHECK(back.python == p.python);
  CHECK(back.variants[1].is_python());
  // A plan without Python variants has no "python" key.
  CHECK_FALSE(to_json(test::fixture_plan()).contains("python"));
}

TEST_CASE(
    "plan: a Python variant without an interpreter, or a plugin without a build, is refused") {
  json j = to_json(python_plan());
  j.erase("python");
  CHECK(error_from(j) ==
        "plan.json: variant baseline is a Python plugin but the plan records no interpreter "
        "(field 'python')");
  json k = to_json(test::fixture_plan());
  k["variants"][0]["recipe"]["argv"] = json::array();
  CHECK(error_from(k) ==
        "plan.json.variants[0].recipe: field 'argv': a plugin that is not a Python plugin needs a "
        "build");
}

TEST_CASE("plan: a plugin's digest is its file's, or its source tree's for a Python plugin") {
  test::TempDir tmp;
  Plan p = python_plan();
  test::write(tmp.path() / "variants/baseline/src/bench/matmul.py", "def make_problem(p): ...\n");
  CHECK(plugin_digest(tmp.path(), p.variants[0]) ==
        sha256_tree(tmp.path() / "variants/baseline/src"));
  Plan c = test::fixture_plan();
  test::write(tmp.path() / c.variants[0].plugin, "ELF");
  CHECK(plugin_digest(tmp.path(), c.variants[0]) == sha256_hex("ELF"));
}

TEST_CASE("plan: the launcher round-trips, and a plan without one is local") {
  Plan p = test::fixture_plan(2);
  json local = to_json(p);
  p.launcher.name = "slurm";
  p.launcher.slurm = {2, "gpu", "proj", "1:00:00", "gpu:1", {"--qos=high"}};
  for (auto& t : p.tasks) t.cpus.clear();  // each lane chooses them on its node
  json j = to_json(p);
  CHECK(plan_from_json(j, "plan.json").launcher == p.launcher);
  local.erase("launcher");
  CHECK(plan_from_json(local, "plan.json").launcher == LauncherSpec{});
}

TEST_CASE("plan: the planner places arms for the local launcher, each lane on its node for Slurm") {
  Plan p = test::fixture_plan(2);
  json local = to_json(p);
  local["tasks"][1]["cpus"] = json::array();
  CHECK(test::error_of([&] { plan_from_json(local, "plan.json"); }) ==
        "plan.json.tasks[1]: field 'cpus': empty; the plan must say where the arm runs");
  p.launcher.name = "slurm";
  p.launcher.slurm.lanes = 2;
  json slurm = to_json(p);  // the planning machine's CPUs left in: meaningless on a node
  CHECK(test::error_of([&] { plan_from_json(slurm, "plan.json"); }) ==
        "plan.json.tasks[0]: field 'cpus': must be empty with the slurm launcher: each lane "
        "chooses the CPUs on its node");
}

TEST_CASE("plan: a Slurm plan has one machine entry per lane") {
  Plan p = test::fixture_plan(2);
  p.launcher.name = "slurm";
  p.launcher.slurm.lanes = 3;
  CHECK(error_from(to_json(p)) == "plan.json: field 'machine': 2 entries for 3 Slurm lanes");
}

TEST_CASE("plan: write_plan writes to_json(p) with its digest, and returns the file's digest") {
  test::TempDir dir;
  Plan p = test::fixture_plan(2);
  p.shapes.push_back(Shape{"x", "label \"shapes\": []\n", json{{"m", 3}}, "kernel"});
  p.tasks = make_schedule(p.shapes, p.schedule);
  for (auto& t : p.tasks) t.cpus = {0};
  const std::string written = write_plan(dir.path(), p);
  const std::string bytes = read_text_file(plan_path(dir.path()));
  CHECK(written == sha256_hex(bytes));
  json expected = to_json(p);
  expected["payload_sha256"] = plan_payload_digest(expected);
  CHECK(bytes == expected.dump(2) + "\n");
  const Plan back = load_plan(dir.path());
  CHECK(back.file_sha256 == written);
  CHECK(to_json(back) == to_json(p));
}

TEST_CASE("plan: a variant's run settings reach its shapes' params, its tactic the settings") {
  Shape s;
  s.id = "m8";
  s.params = json{{"m", 8}, {"k", 16}};
  Variant v;
  CHECK(arm_shape(s, v).params == s.params);
  CHECK(variant_tactic(v, "auto") == "auto");
  v.run = json{{"k", 32}, {"seed", 3}, {"tactic", "default"}};
  CHECK(arm_shape(s, v).params == json{{"m", 8}, {"k", 32}, {"seed", 3}});
  CHECK(variant_tactic(v, "auto") == "default");
}
