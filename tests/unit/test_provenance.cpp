// Provenance validation against a real run directory: plan.json and every result written by the
// real writers (write_json_atomic, write_result) into a temporary directory, then one thing broken
// per case. Each rule of docs/provenance.md must name the file and the field it refuses.
// tests/integration/tamper.sh does the same end to end through `abharness verify` and `report`.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "model/plan.hpp"
#include "model/result.hpp"
#include "plan_fixture.hpp"
#include "provenance/provenance.hpp"
#include "provenance/repair_hints.hpp"
#include "report/adaptive.hpp"
#include "system/json_io.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

// A run directory with a valid plan and a valid result for every planned arm.
struct Run {
  test::TempDir tmp{"abh-provenance"};
  fs::path dir = tmp.path();
  Plan plan;

  explicit Run(Plan planned = test::fixture_plan()) : plan(std::move(planned)) {
    // The built plugins the plan records: verify re-hashes them.
    for (const auto& v : plan.variants) test::write(dir / v.plugin, "plugin of " + v.name);
    write_plan();
    for (const auto& t : plan.tasks)
      write_result(dir, result_rel(t), test::fixture_result(plan, t));
  }
  // Writes the plan as the orchestrator does and records the digest of its bytes, the one every
  // result names.
  void write_plan() {
    abh::write_plan(dir, plan);
    plan.file_sha256 = sha256_file(plan_path(dir));
  }
  fs::path file(const std::string& rel) const { return dir / rel; }
  Validation validate() const { return validate_run(dir, plan, adaptive_blocks); }

  // Runs `change` on the parsed file and writes it back, leaving payload_sha256 as it was.
  void edit(const std::string& rel, const std::function<void(json&)>& change) {
    json j = read_json_file(file(rel));
    change(j);
    write_json_atomic(file(rel), j);
  }
  // The same, then payload_sha256 recomputed the way the harness does (as a forger who knows the
  // recipe would), so that the rule under test fires, not the digest rule.
  void forge(const std::string& rel, const std::function<void(json&)>& change) {
    edit(rel, [&](json& j) {
      change(j);
      j["payload_sha256"] = payload_digest(j);
    });
  }
};

// One expected problem: the rule, the file (run-relative) and the field it names.
struct Expected {
  std::string rule, file, field;
};

// The problems found, one per line as a user reads them.
doctest::String problems_of(const Validation& v) {
  std::string s;
  for (const auto& p : v.problems) s += p.describe() + "\n";
  return s.c_str();
}

// The start of the line that names `e`, as ProvenanceProblem::describe() writes it.
doctest::Contains names(const Expected& e) {
  std::string s = e.file + ": " + e.rule;
  if (!e.field.empty()) s += " (field '" + e.field + "')";
  return doctest::Contains(s.c_str());
}

// Validates the run: it must have exactly the `expected` problems, and so be incomplete.
void check_refused(const Run& run, const std::vector<Expected>& expected) {
  Validation v = run.validate();
  for (const auto& e : expected) CHECK(problems_of(v) == names(e));
  CHECK(v.problems.size() == expected.size());
  CHECK_FALSE(v.complete());
}

const std::string kA1 = "results/m32/A1.json";
const std::string kB = "results/m32/B.json";
const std::string kA2 = "results/m64/A2.json";

}  // namespace

TEST_CASE("provenance: a run written by the real writers passes, and its digest is stable") {
  Run run;
  Validation v = run.validate();
  CHECK(problems_of(v) == "");
  CHECK(v.leftovers.empty());
  CHECK(v.complete());
  REQUIRE(v.outcomes.size() == 6);
  for (size_t i = 0; i < v.outcomes.size(); ++i) {
    CHECK(v.outcomes[i].task == run.plan.tasks[i]);
    CHECK(v.outcomes[i].result.has_value());
    CHECK(v.outcomes[i].failure.empty());
  }
  CHECK(v.stamps.size() == 6);
  CHECK(v.result_set_digest.size() == 64);
  CHECK(run.validate().result_set_digest == v.result_set_digest);
  // The digest covers the plan file: another plan gives another digest for the same results.
  run.plan.created_at = "2026-11-30T00:00:00Z";
  run.write_plan();
  CHECK(run.validate().result_set_digest != v.result_set_digest);
}

TEST_CASE("provenance: a problem reads file, rule, field, expected and found") {
  ProvenanceProblem p{"plugin-sha256", kB, "plugin_sha256", "abc", "def"};
  CHECK(p.describe() == kB + ": plugin-sha256 (field 'plugin_sha256'): expected abc, found def");
  ProvenanceProblem bare{"unplanned-file", "results/x", "", "", ""};
  CHECK(bare.describe() == "results/x: unplanned-file");
}

TEST_CASE("provenance: result-format refuses unparseable, non-object and ill-typed files") {
  Run run;
  SUBCASE("truncated JSON") {
    std::string text = test::slurp(run.file(kB));
    test::write(run.file(kB), text.substr(0, text.size() / 2));
  }
  SUBCASE("not an object") {
    test::write(run.file(kB), "[1, 2, 3]\n");
  }
  SUBCASE("a field of the wrong type") {
    run.forge(kB, [](json& j) { j["pid"] = "1234"; });
  }
  SUBCASE("a negative sample") {
    run.forge(kB, [](json& j) { j["measurement"]["samples_ns"][1] = -1.0; });
  }
  check_refused(run, {{"result-format", kB, ""}});
  CHECK(run.validate().outcomes[1].failure == "result failed provenance validation");
}

TEST_CASE("provenance: schema-version refuses another result schema") {
  Run run;
  SUBCASE("bumped") {
    run.edit(kA1, [](json& j) { j["schema_version"] = 99; });
  }
  SUBCASE("a string") {
    run.forge(kA1, [](json& j) { j["schema_version"] = "1"; });
  }
  check_refused(run, {{"schema-version", kA1, "schema_version"}});
}

TEST_CASE("provenance: payload-digest catches any edit of the payload or the digest") {
  Run run;
  SUBCASE("a sample made faster") {
    run.edit(kB, [](json& j) { j["measurement"]["samples_ns"][0] = 1.0; });
  }
  SUBCASE("the digest replaced") {
    run.edit(kB, [](json& j) { j["payload_sha256"] = std::string(64, '0'); });
  }
  SUBCASE("the digest of the wrong type") {
    run.edit(kB, [](json& j) { j["payload_sha256"] = 12345; });
  }
  SUBCASE("the digest removed") {
    run.edit(kB, [](json& j) { j.erase("payload_sha256"); });
  }
  check_refused(run, {{"payload-digest", kB, "payload_sha256"}});
}

TEST_CASE("provenance: harness-version refuses a result of another harness") {
  Run run;
  run.forge(kA2, [](json& j) { j["harness_version"] = "0.0.1-other"; });
  check_refused(run, {{"harness-version", kA2, "harness_version"}});
}

TEST_CASE("provenance: invocation catches swapped arms, another run, shape or settings") {
  Run run;
  const std::string a2 = "results/m32/A2.json";
  SUBCASE("A1 and A2 of one shape swapped") {
    fs::rename(run.file(kA1), run.file("swap.json"));
    fs::rename(run.file(a2), run.file(kA1));
    fs::rename(run.file("swap.json"), run.file(a2));
    check_refused(run,
                  {{"invocation", kA1, "invocation.arm"}, {"invocation", a2, "invocation.arm"}});
  }
  SUBCASE("a valid result of another run") {
    run.forge(kB, [](json& j) { j["invocation"]["run_id"] = "run-2"; });
    check_refused(run, {{"invocation", kB, "invocation.run_id"}});
  }
  SUBCASE("another shape's result in this shape's place") {
    fs::copy_file(run.file(kA2), run.file(a2), fs::copy_options::overwrite_existing);
    check_refused(
        run, {{"invocation", a2, "invocation.shape"}, {"invocation", a2, "invocation.params.m"}});
  }
  SUBCASE("measured with other settings") {
    run.forge(kB, [](json& j) { j["invocation"]["settings"]["min_samples"] = 3; });
    check_refused(run, {{"invocation", kB, "invocation.settings.min_samples"}});
  }
}

TEST_CASE("provenance: source-identity refuses the other variant's sources") {
  Run run;
  // The identity checks its own digest, so the tamper is a whole, valid identity: the candidate's.
  const json candidate = to_json(run.plan.variant("candidate").source);
  run.forge(kA1, [&](json& j) { j["source"] = candidate; });
  check_refused(run, {{"source-identity", kA1, "source.requested"},
                      {"source-identity", kA1, "source.commit"},
                      {"source-identity", kA1, "source.digest"}});
}

TEST_CASE("provenance: plugin-sha256 refuses a result of another plugin build") {
  Run run;
  run.forge(kB, [](json& j) { j["plugin_sha256"] = sha256_hex("rebuilt plugin"); });
  check_refused(run, {{"plugin-sha256", kB, "plugin_sha256"}});
}

TEST_CASE("provenance: python-interpreter refuses an arm under another interpreter, or none") {
  Run run;
  const Interpreter py = test::fixture_interpreter();
  run.plan.python = py;
  // A Python plugin is its source tree: the plan names the directory and its tree digest.
  for (auto& v : run.plan.variants) {
    v.recipe.python = PythonPlugin{"m", "make_problem", "cpu", ""};
    v.plugin = "variants/" + v.name + "/src";
    std::filesystem::create_directories(run.dir / v.plugin);
    std::ofstream(run.dir / v.plugin / "m.py") << "def make_problem(**params): pass\n";
    v.plugin_sha256 = plugin_digest(run.dir, v);
  }
  run.write_plan();
  Interpreter arm = py;
  arm.distributions.clear();
  arm.site_sha256 = std::string(64, 't');  // a moved fingerprint alone is no other interpreter
  for (const auto& t : run.plan.tasks) {
    ArmResult r = test::fixture_result(run.plan, t);
    r.python = arm;
    write_result(run.dir, result_rel(t), r);
  }
  CHECK(run.validate().problems.empty());
  SUBCASE("other distributions") {
    run.forge(kB, [](json& j) { j["python"]["distributions_sha256"] = std::string(64, 'e'); });
    check_refused(run, {{"python-interpreter", kB, "python.distributions_sha256"}});
  }
  SUBCASE("another binary") {
    run.forge(kA1, [](json& j) { j["python"]["sha256"] = std::string(64, 'b'); });
    check_refused(run, {{"python-interpreter", kA1, "python.sha256"}});
  }
  SUBCASE("no interpreter recorded") {
    run.forge(kA2, [](json& j) { j.erase("python"); });
    check_refused(run, {{"python-interpreter", kA2, "python"}});
  }
}

TEST_CASE("provenance: python-interpreter refuses an interpreter record in a C++ arm's result") {
  Run run;
  run.forge(kB, [](json& j) { j["python"] = to_json(Interpreter{}); });
  check_refused(run, {{"python-interpreter", kB, "python"}});
}

TEST_CASE("provenance: worker-sha256 refuses a result of another worker binary") {
  Run run;
  run.forge(kA2, [](json& j) { j["worker_sha256"] = sha256_hex("other worker"); });
  check_refused(run, {{"worker-sha256", kA2, "worker_sha256"}});
}

TEST_CASE("provenance: environment names the differing leaf field") {
  Run run;
  std::string field;
  SUBCASE("another host") {
    run.forge(kB, [](json& j) { j["environment"]["hostname"] = "other-host"; });
    field = "environment.hostname";
  }
  SUBCASE("another library version") {
    run.forge(kB, [](json& j) { j["environment"]["libraries"]["kernel"] = "9.9"; });
    field = "environment.libraries.kernel";
  }
  SUBCASE("a GPU the plan does not have") {
    const json gpu = to_json(GpuInfo{0, "NVIDIA H200", "GPU-1234", "", 9, 0, 132, 0, 0});
    run.forge(kB, [&](json& j) { j["environment"]["gpu"] = gpu; });
    field = "environment.gpu";
  }
  check_refused(run, {{"environment", kB, field}});
}

TEST_CASE("provenance: placement refuses an arm that ran elsewhere than the plan placed it") {
  Run run;
  std::string field;
  SUBCASE("another CPU list") {
    run.forge(kB, [](json& j) { j["placement"]["cpus"] = json::array({5}); });
    field = "placement.cpus";
  }
  SUBCASE("not pinned") {
    run.forge(kB, [](json& j) { j["placement"]["affinity"] = json::array({0, 1}); });
    field = "placement.affinity";
  }
  SUBCASE("seen on another CPU") {
    run.forge(kB, [](json& j) { j["placement"]["seen"] = json::array({0, 1}); });
    field = "placement.seen";
  }
  SUBCASE("seen nowhere") {
    run.forge(kB, [](json& j) { j["placement"]["seen"] = json::array(); });
    field = "placement.seen";
  }
  check_refused(run, {{"placement", kB, field}});
}

TEST_CASE("provenance: samples needs at least one and one clock reading per sample") {
  Run run;
  SUBCASE("no samples") {
    run.forge(kA1, [](json& j) { j["measurement"]["samples_ns"] = json::array(); });
    check_refused(run, {{"samples", kA1, "measurement.samples_ns"}});
  }
  SUBCASE("clock readings that do not pair with the samples") {
    run.forge(kA1, [](json& j) { j["measurement"]["clock"]["sample_mhz"] = {1500.0, 1500.0}; });
    check_refused(run, {{"samples", kA1, "measurement.clock.sample_mhz"}});
  }
  SUBCASE("one clock reading per sample passes") {
    run.forge(kA1, [](json& j) { j["measurement"]["clock"]["sample_mhz"] = {1500, 1490, 1510}; });
    CHECK(problems_of(run.validate()) == "");
  }
}

TEST_CASE("provenance: correctness refuses a result that failed its check") {
  Run run;
  run.forge(kB, [](json& j) { j["correctness"]["passed"] = false; });
  check_refused(run, {{"correctness", kB, "correctness.passed"}});
}

TEST_CASE("provenance: shape-cache refuses the arms of one shape with differing cache flushes") {
  Run run;
  run.forge(kB,
            [](json& j) { j["measurement"]["cache_preparation"] = "flush-read 125829120 bytes"; });
  check_refused(run, {{"shape-cache", kB, "measurement.cache_preparation"}});
  CHECK(problems_of(run.validate()) ==
        doctest::Contains("expected the cache preparation of results/m32/A1.json (warm), found "
                          "flush-read 125829120 bytes"));
  // The whole shape prepared the same way is consistent.
  for (const char* rel : {"results/m32/A1.json", "results/m32/A2.json"})
    run.forge(
        rel, [](json& j) { j["measurement"]["cache_preparation"] = "flush-read 125829120 bytes"; });
  CHECK(problems_of(run.validate()) == "");
}

TEST_CASE("provenance: unplanned-file refuses extra files, directories and symbolic links") {
  Run run;
  std::string rel;
  SUBCASE("an extra arm") {
    rel = "results/m32/A3.json";
    test::write(run.file(rel), "{}\n");
  }
  SUBCASE("a directory of no planned shape") {
    rel = "results/m1";
    fs::create_directories(run.file(rel));
  }
  SUBCASE("a file beside the shape directories") {
    rel = "results/notes.json";
    fs::copy_file(run.file(kA1), run.file(rel));
  }
  SUBCASE("a hidden file that is no interrupted write") {
    rel = "results/m32/.notes";
    test::write(run.file(rel), "x");
  }
  SUBCASE("a symbolic link beside the planned results") {
    rel = "results/m32/A3.json";
    fs::create_symlink("A1.json", run.file(rel));
  }
  SUBCASE("a FIFO beside the planned results") {
    rel = "results/m32/A3.json";
    REQUIRE(::mkfifo(run.file(rel).c_str(), 0600) == 0);
  }
  check_refused(run, {{"unplanned-file", rel, ""}});
}

TEST_CASE(
    "provenance: anything but a regular file at a planned result is a result-format problem") {
  Run run;
  std::string found;
  SUBCASE("a symbolic link") {
    found = "a symbolic link";
    fs::rename(run.file(kA1), run.file("A1.json"));
    fs::create_symlink("../../A1.json", run.file(kA1));
  }
  SUBCASE("a FIFO, which is never opened (a read would block)") {
    found = "a FIFO";
    fs::remove(run.file(kA1));
    REQUIRE(::mkfifo(run.file(kA1).c_str(), 0600) == 0);
  }
  SUBCASE("a directory") {
    found = "a directory";
    fs::remove(run.file(kA1));
    fs::create_directory(run.file(kA1));
  }
  check_refused(run, {{"result-format", kA1, ""}});
  const Validation v = run.validate();
  REQUIRE(v.problems.size() == 1);
  CHECK(v.problems[0].expected == "a regular file");
  CHECK(v.problems[0].found == found);
}

TEST_CASE("provenance: duplicate-result refuses one payload at two planned places") {
  Run run;
  // The invocation rule already catches a copied file, so this can only arise from a plan that
  // lists the same arm twice (plan_from_json refuses one; this plan is validated as built). The
  // results are written again: they bind to the new plan file.
  run.plan.tasks.push_back(run.plan.tasks.front());
  run.write_plan();
  for (const auto& t : run.plan.tasks)
    write_result(run.dir, result_rel(t), test::fixture_result(run.plan, t));
  check_refused(run, {{"duplicate-result", kA1, "payload_sha256"}});
}

TEST_CASE("provenance: interrupted writes are listed as leftovers, never read") {
  Run run;
  const std::string tmp = "results/m32/.A1.json.tmp.99999";
  test::write(run.file(tmp), "{ half a file");
  Validation v = run.validate();
  CHECK(problems_of(v) == "");
  CHECK(v.complete());
  CHECK(v.leftovers == std::vector<std::string>{tmp});
}

TEST_CASE("provenance: an arm without a result carries its failure record or not run") {
  Run run;
  for (const std::string& rel : {kA1, kB, kA2}) fs::remove(run.file(rel));
  write_json_atomic(log_path(run.dir, run.plan.tasks[0], "failure.json"),
                    json{{"reason", "exit code 3: wrong result"}});
  test::write(log_path(run.dir, run.plan.tasks[1], "failure.json"), "not json");
  Validation v = run.validate();
  CHECK(problems_of(v) == "");
  CHECK_FALSE(v.complete());
  CHECK(v.outcomes[0].failure == "exit code 3: wrong result");
  CHECK(v.outcomes[1].failure.rfind("failed (failure record unreadable: ", 0) == 0);
  CHECK(v.outcomes[5].failure == "not run");
  CHECK(v.stamps.size() == 3);
}

TEST_CASE("provenance: conditional blocks count as the block rule it is given decides") {
  // The fixture plan with one conditional block per shape after its planned one, every arm of
  // both measured.
  Plan adaptive = test::fixture_plan();
  adaptive.schedule.until_decided = 1;
  adaptive.tasks = make_schedule(adaptive.shapes, adaptive.schedule);
  for (auto& t : adaptive.tasks) t.cpus = {1, 0};
  Run run(adaptive);
  int calls = 0;
  const BlockRule only_m64 = [&](const Plan& plan, const std::vector<ArmOutcome>& outcomes) {
    ++calls;
    CHECK(plan.run_id == run.plan.run_id);
    CHECK(outcomes.size() == plan.tasks.size());
    AdaptiveBlocks b;
    b.required.insert({"m64", 1});
    return b;
  };
  Validation v = validate_run(run.dir, run.plan, only_m64);
  CHECK(calls == 1);
  // m32's conditional block ran though the rule did not call for it; m64's counts.
  for (const char* arm : {"A3", "B2", "A4"})
    CHECK(problems_of(v) == names({"unrequired-block", "results/m32/" + std::string(arm) + ".json",
                                   "invocation.round"}));
  CHECK(v.problems.size() == 3);
  CHECK(v.outcomes.size() == 9);
  for (const auto& o : v.outcomes) CHECK((!o.task.conditional || o.task.shape == "m64"));
  CHECK_THROWS_WITH_AS(validate_run(run.dir, run.plan, nullptr),
                       doctest::Contains("no rule for its adaptive blocks"), Error);
}

TEST_CASE("provenance: an earlier validation is reused only for files unchanged on disk") {
  Run run;
  Validation first = run.validate();
  REQUIRE(first.problems.empty());
  SUBCASE("unchanged files are not read again") {
    // Same size and mtime: the earlier validation stands, so damage that keeps both goes unseen
    // within this process. This is what lets resume validate each result once.
    const auto mtime = fs::last_write_time(run.file(kB));
    const auto size = fs::file_size(run.file(kB));
    test::write(run.file(kB), std::string(size, ' '));
    fs::last_write_time(run.file(kB), mtime);
    check_refused(run, {{"result-format", kB, ""}});
    Validation again = validate_run(run.dir, run.plan, adaptive_blocks, &first);
    CHECK(problems_of(again) == "");
    CHECK(again.result_set_digest == first.result_set_digest);
  }
  SUBCASE("a file whose size changed is validated again") {
    run.edit(kB, [](json& j) { j["measurement"]["samples_ns"][0] = 1.0; });
    Validation again = validate_run(run.dir, run.plan, adaptive_blocks, &first);
    CHECK(problems_of(again) == names({"payload-digest", kB, "payload_sha256"}));
  }
}

namespace {

// A run whose lanes Slurm placed: two GPU lanes, the plan promising the machine without node or
// GPU and naming no CPUs, each result measured on the node and CPUs its lane's job recorded
// (launcher/nodes/).
struct SlurmRun {
  test::TempDir tmp{"abh-provenance-slurm"};
  fs::path dir = tmp.path();
  Plan plan = test::fixture_plan(2);

  static Environment node(const Plan& p, int lane, const std::string& host) {
    Environment e = p.machine.at(static_cast<size_t>(lane));
    e.hostname = host;
    e.gpu->uuid = "GPU-" + host;
    e.gpu->pci_bus_id = "0000:17:00.0";
    return e;
  }
  // The CPUs a job of lane `lane` chose on its node.
  static std::vector<int> cpus_of(int lane) { return {2 * lane + 1, 2 * lane}; }

  SlurmRun() {
    plan.launcher.name = "slurm";
    plan.launcher.slurm.lanes = 2;
    for (auto& m : plan.machine) m = without_placement(m);
    for (auto& t : plan.tasks) t.cpus.clear();
    for (const auto& v : plan.variants) test::write(dir / v.plugin, "plugin of " + v.name);
    write_plan(dir, plan);
    plan.file_sha256 = sha256_file(plan_path(dir));
    for (int lane : {0, 1})
      record(lane, "100" + std::to_string(lane), "node-" + std::to_string(lane));
    for (const auto& t : plan.tasks) write_on(t, "node-" + std::to_string(t.gpu));
  }
  void record(int lane, const std::string& job, const std::string& host,
              const std::string& refused = "", std::vector<int> cpus = {}) {
    NodeRecord r;
    r.lane = lane;
    r.job_id = job;
    r.started_at = "2026-11-29T12:00:00Z";
    r.environment = node(plan, lane, host);
    r.refused = refused;
    if (refused.empty()) r.cpus = cpus.empty() ? cpus_of(lane) : cpus;
    write_json_atomic(node_record_path(dir, lane, job, 0), to_json(r));
  }
  void write_on(const Task& t, const std::string& host, std::vector<int> cpus = {}) {
    ArmResult r = test::fixture_result_at(plan, t, cpus.empty() ? cpus_of(t.gpu) : cpus);
    std::map<std::string, std::string> libs = r.environment.libraries;
    r.environment = node(plan, t.gpu, host);
    r.environment.libraries = libs;
    write_result(dir, result_rel(t), r);
  }
  const Task& task(const std::string& shape, const std::string& arm) const {
    return *plan.find_task(shape, arm);
  }
};

}  // namespace

TEST_CASE("provenance: a Slurm run places each result on a node its lane recorded") {
  SlurmRun run;
  Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
  CHECK(problems_of(v) == "");
  CHECK(v.complete());
}

TEST_CASE("provenance: lane-node refuses a result from a node no job of its lane recorded") {
  SlurmRun run;
  std::string found;
  SUBCASE("the node records removed") {
    fs::remove_all(run.dir / "launcher" / "nodes");
    run.write_on(run.task("m32", "B"), "node-0");
    found = "node-0";
  }
  SUBCASE("a node of another lane") {
    run.write_on(run.task("m32", "B"), "node-1");
    found = "node-1";
  }
  SUBCASE("a node whose job refused it") {
    run.record(0, "1002", "node-9", "node node-9 is not the planned machine: GPU model");
    run.write_on(run.task("m32", "B"), "node-9");
    found = "node-9";
  }
  Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
  CHECK(problems_of(v) == doctest::Contains("results/m32/B.json: lane-node (field "
                                            "'environment.hostname'): expected a node and GPU "
                                            "that a job of lane 0 recorded"));
  const std::string where = "found " + found + " GPU GPU-" + found;
  CHECK(problems_of(v) == doctest::Contains(where.c_str()));
  CHECK_FALSE(v.complete());
}

TEST_CASE("provenance: lane-node still holds the rest of the machine to the plan") {
  SlurmRun run;
  run.record(1, "1002", "node-5");
  ArmResult r = test::fixture_result_at(run.plan, run.task("m64", "B"), SlurmRun::cpus_of(1));
  const auto libs = r.environment.libraries;
  r.environment = SlurmRun::node(run.plan, 1, "node-5");
  r.environment.driver_version = "999.1";
  r.environment.libraries = libs;
  write_result(run.dir, result_rel(run.task("m64", "B")), r);
  Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
  CHECK(problems_of(v) ==
        names({"environment", "results/m64/B.json", "environment.driver_version"}));
}

TEST_CASE("provenance: shape-split refuses the arms of one shape on two nodes") {
  SlurmRun run;
  run.record(0, "1002", "node-7");  // lane 0 restarted on another node
  run.write_on(run.task("m32", "A2"), "node-7");
  Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
  CHECK(problems_of(v) == names({"shape-split", "results/m32/A2.json", "environment"}));
  CHECK(problems_of(v) == doctest::Contains("node-0 GPU GPU-node-0"));
  CHECK(v.problems.size() == 1);
  CHECK_FALSE(v.complete());
}

TEST_CASE("provenance: a Slurm result's CPUs are the ones its lane's job chose on the node") {
  SlurmRun run;
  // The plan names no CPUs: the planning machine's numbers mean nothing on the node.
  run.write_on(run.task("m32", "B"), "node-0", {6, 7});
  Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
  CHECK(problems_of(v) == names({"placement", "results/m32/B.json", "placement.cpus"}));
  CHECK(problems_of(v) ==
        doctest::Contains("expected 0-1 (chosen on the node by lane job 1000), found 6-7"));
  CHECK_FALSE(v.complete());
}

TEST_CASE("provenance: a lane restarted on its node with other CPUs splits no shape silently") {
  SlurmRun run;
  run.record(0, "1002", "node-0", "", {5, 4});
  SUBCASE("one arm of the shape on the new CPUs: shape-split") {
    run.write_on(run.task("m32", "A2"), "node-0", {5, 4});
    Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
    CHECK(problems_of(v) == names({"shape-split", "results/m32/A2.json", "environment"}));
    CHECK(v.problems.size() == 1);
  }
  SUBCASE("the whole shape measured again there: valid") {
    for (const char* arm : {"A1", "B", "A2"}) run.write_on(run.task("m32", arm), "node-0", {5, 4});
    Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
    CHECK(problems_of(v) == "");
  }
}

TEST_CASE("provenance: an unreadable node record is a problem, not a silent skip") {
  SlurmRun run;
  test::write(run.dir / "launcher" / "nodes" / "lane0-job1003-r0.json", "{ not json");
  Validation v = validate_run(run.dir, run.plan, adaptive_blocks);
  CHECK(problems_of(v) == doctest::Contains("launcher/nodes: lane-record"));
  CHECK_FALSE(v.complete());
}

TEST_CASE("provenance: what to do about a refused run says so by the kind of problem") {
  Validation v;
  CHECK(repair_hints(v, "'r'").empty());
  v.problems.push_back({"payload-digest", "results/s/B.json", "payload_sha256", "a", "b"});
  v.problems.push_back({"invocation", "results/s/B.json", "invocation.arm", "B", "A1"});
  v.problems.push_back({"payload-digest", "results/t/A1.json", "payload_sha256", "a", "b"});
  std::vector<std::string> h = repair_hints(v, "'r'");
  REQUIRE(h.size() == 1);
  CHECK(h[0].starts_with("2 result file(s) above fail their checks"));
  CHECK(h[0].find("`abharness resume 'r'`") != std::string::npos);

  v.problems.push_back({kUnrequiredBlock, "results/s/A3.json", "invocation.round", "x", "y"});
  v.problems.push_back(
      {"plugin-file", "variants/baseline/p.so", "variants[0].plugin_sha256", "a", "b"});
  h = repair_hints(v, "'r'");
  REQUIRE(h.size() == 3);
  CHECK(h[0].starts_with("a built plugin under variants/"));
  CHECK(h[2].find("sets them aside under set_aside/unrequired/") != std::string::npos);

  // Every result naming another plan, none valid: the plan changed, and that is all it says.
  Validation p;
  for (const char* f : {"results/s/A1.json", "results/s/B.json", "results/s/A2.json"})
    p.problems.push_back({"plan-digest", f, "plan_sha256", "x", "y"});
  p.outcomes.resize(3);
  h = repair_hints(p, "'r'");
  REQUIRE(h.size() == 1);
  CHECK(h[0].starts_with("plan.json is not the plan"));
  // One result of another run among valid ones: that result, not the plan.
  p.problems.resize(1);
  p.outcomes[1].result = ArmResult{};
  h = repair_hints(p, "'r'");
  REQUIRE(h.size() == 1);
  CHECK(h[0].starts_with("1 result file(s) above"));
}
