// The planner against real repositories and the real worker binary: what a request resolves to,
// the plan it writes, and every refusal of a resume (tests/integration/resume_refusals.sh drives
// the same refusals through `abharness resume`).
#ifdef ABH_HAVE_ORCHESTRATOR

#include <doctest/doctest.h>

#include <regex>

#include "git_test_repo.hpp"
#include "model/grid.hpp"
#include "model/timing.hpp"
#include "model/worker_protocol.hpp"
#include "plan_request_fixture.hpp"
#include "planner.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/sha256.hpp"

using namespace abh;
using namespace abh::test;

namespace {

const fs::path kWorker = fs::path(ABH_BIN_DIR) / "abharness-worker";

// What plans record as worker_sha256: the digest of the worker's files beside kWorker.
std::string worker_digest_now() {
  return worker_protocol::worker_digest(worker_protocol::worker_files(kWorker.parent_path()));
}

// A planned run directory whose binaries and machine are the real ones of this build: resume
// would accept it until the test changes something.
struct PlannedRun {
  TempDir tmp{"abh-resume"};
  fs::path dir = tmp.path() / "run";
  Plan plan;
  PlannedRun() {
    plan.repo = (tmp.path() / "repo").string();
    plan.worker_sha256 = worker_digest_now();
    for (const char* name : {"baseline", "candidate"}) {
      Variant v;
      v.name = name;
      v.source.requested = name;
      v.source.kind = "commit";
      v.plugin = std::string("variants/") + name + "/libk.so";
      v.device = "cpu";
      test::write(dir / v.plugin, std::string("plugin ") + name);
      v.plugin_sha256 = sha256_file(dir / v.plugin);
      plan.variants.push_back(v);
    }
    plan.machine = probe_machine(kWorker, false, {}, dir / "logs" / "probe");
  }
  std::string refusal() const {
    return usage_error_of([&] { check_resumable(dir, plan, kWorker); });
  }
};

bool starts_with_refusal(const std::string& msg, const fs::path& dir, const std::string& what) {
  return msg.rfind("cannot resume " + dir.string() + ": " + what, 0) == 0 &&
         contains(msg,
                  "start a new run instead (results measured under different conditions "
                  "must not be mixed)");
}

}  // namespace

TEST_CASE("planner: --gpus is split at commas and must name a GPU") {
  CHECK(split_gpus("0") == std::vector<std::string>{"0"});
  CHECK(split_gpus("0,1,,3") == std::vector<std::string>{"0", "1", "3"});
  CHECK(split_gpus("GPU-a1b2") == std::vector<std::string>{"GPU-a1b2"});
  CHECK(usage_error_of([] { split_gpus(",,"); }) ==
        "--gpus ',,': give GPU indices or UUIDs, e.g. 0,1");
  CHECK(usage_error_of([] { split_gpus(""); }).rfind("--gpus '':", 0) == 0);
}

TEST_CASE("planner: a new run id is a UTC time and a random suffix, safe as a directory name") {
  const std::string id = new_run_id();
  CHECK(std::regex_match(id, std::regex("20[0-9]{6}-[0-9]{6}-[0-9a-f]{6}")));
  CHECK_NOTHROW(check_safe_name(id, "--run-id"));
}

TEST_CASE("planner: a run directory is created once, and nothing else is written") {
  TempDir tmp;
  const fs::path runs = tmp.path() / "runs";
  std::string id = "first";
  CHECK(create_run_dir(runs, id) == runs / "first");
  CHECK(fs::is_directory(runs / "first"));
  // Never a .gitignore: the runs root may be the user's repository (check_run_inputs refuses a
  // runs root git would see instead).
  CHECK_FALSE(fs::exists(runs / ".gitignore"));
  id = "first";
  // Without a plan, nothing in it can be resumed: the way out is to remove it, not resume.
  CHECK(usage_error_of([&] { create_run_dir(runs, id); }) ==
        "run directory " + (runs / "first").string() +
            " already exists and holds no plan (a start that failed or was stopped before its "
            "plan was written: nothing in it was measured, and resume cannot continue it): "
            "remove it (rm -r '" +
            (runs / "first").string() + "') or give another --run-id");
  test::write(runs / "first" / "plan.json", "{}");
  CHECK(usage_error_of([&] { create_run_dir(runs, id); }) ==
        "run directory " + (runs / "first").string() + " already exists: use `abharness resume " +
            (runs / "first").string() + "` to continue it, or another --run-id");
  // A .gitignore the user wrote is left alone.
  test::write(runs / ".gitignore", "*.log\n");
  std::string fresh;
  const fs::path dir = create_run_dir(runs, fresh);
  CHECK(dir == runs / fresh);
  CHECK_NOTHROW(check_safe_name(fresh, "--run-id"));
  CHECK(read_file(runs / ".gitignore") == "*.log\n");
  std::string escaping = "../x";
  CHECK(contains(test::error_of([&] { create_run_dir(runs, escaping); }), "--run-id '../x'"));
  CHECK_FALSE(fs::exists(tmp.path() / "x"));
}

TEST_CASE("planner: a request resolves both revisions to commits and reads the grid") {
  Request r;
  ResolvedRequest got = resolve_request(r.req);
  CHECK(got.repo == r.repo.root());
  REQUIRE(got.variants.size() == 2);
  CHECK(got.variants[0].spec.name == "baseline");
  CHECK(got.variants[0].source.commit == trim(r.repo.git("rev-parse HEAD~1")));
  CHECK(got.variants[0].source.requested == "HEAD~1");
  CHECK(got.variants[1].spec.name == "candidate");
  CHECK(got.variants[1].source.commit == r.repo.head());
  CHECK(got.variants[1].source.kind == "commit");
  REQUIRE(got.grid.shapes.size() == 2);
  CHECK(got.grid.shapes[1].id == "m64");
}

TEST_CASE("planner: a bad request is a usage error naming the flag, before anything is made") {
  Request r;
  SUBCASE("settings out of range") {
    r.req.settings.max_noise = 3;
    CHECK(contains(usage_error_of([&] { resolve_request(r.req); }), "--max-noise"));
  }
  SUBCASE("a missing repository") {
    r.req.repo = (r.tmp.path() / "nowhere").string();
    CHECK(usage_error_of([&] { resolve_request(r.req); }) ==
          "--repo " + r.req.repo + " does not exist");
  }
  SUBCASE("an unknown baseline") {
    r.req.baseline = "no-such-rev";
    const std::string msg = usage_error_of([&] { resolve_request(r.req); });
    CHECK(msg.rfind("--baseline: ", 0) == 0);
    CHECK(contains(msg, "no-such-rev"));
  }
  SUBCASE("an unknown candidate") {
    r.req.candidate = "no-such-branch";
    CHECK(usage_error_of([&] { resolve_request(r.req); }).rfind("--candidate: ", 0) == 0);
  }
  SUBCASE("an unreadable grid") {
    test::write(r.req.grid, "{");
    CHECK(usage_error_of([&] { resolve_request(r.req); }).rfind("grid: ", 0) == 0);
  }
  SUBCASE("--until-decided with a launcher that runs each lane as one job") {
    r.req.launcher.name = "slurm";
    r.req.schedule.until_decided = 2;
    CHECK(usage_error_of([&] {
            resolve_request(r.req);
          }).rfind("--until-decided 2: the slurm launcher runs each lane's arms in one job", 0) ==
          0);
  }
  SUBCASE("--cpus with a launcher whose lanes choose their CPUs on their nodes") {
    r.req.launcher.name = "slurm";
    r.req.cpus = "0-1";
    CHECK(usage_error_of([&] {
            resolve_request(r.req);
          }).rfind("--cpus 0-1: with --launcher slurm each lane chooses the CPUs on its node", 0) ==
          0);
  }
  CHECK_FALSE(fs::exists(r.tmp.path() / "runs"));
}

TEST_CASE("planner: the CPU machine is the host as the worker probes it") {
  TempDir tmp;
  auto machine = probe_machine(kWorker, false, {"0", "1"}, tmp.path() / "probe");
  REQUIRE(machine.size() == 1);
  CHECK(machine[0].hostname == probe_host().hostname);
  CHECK(machine[0].cpu_model == probe_host().cpu_model);
  CHECK_FALSE(machine[0].gpu.has_value());
  CHECK(fs::exists(tmp.path() / "probe" / "probe.out"));
}

TEST_CASE("planner: make_plan builds both variants and writes the plan it returns") {
  TempDir tmp{"abh-make-plan"};
  const fs::path repo = tmp.path() / "repo";
  sh(std::string(ABH_SOURCE_DIR) + "/examples/make-demo-repo.sh cpu " + quote(repo) +
     " >/dev/null");
  PlanRequest req;
  req.repo = repo.string();
  req.baseline = "HEAD~1";
  req.candidate = "HEAD";
  req.grid = (tmp.path() / "grid.json").string();
  req.argv = {"abharness", "run", "--baseline", "HEAD~1"};
  req.schedule.name = "abba";
  write_grid(req.grid, {24, 40});
  ResolvedRequest resolved = resolve_request(req);
  const fs::path run_dir = tmp.path() / "runs" / "r1";
  fs::create_directories(run_dir);

  Plan plan = make_plan(req, resolved, "r1", run_dir, kWorker, tmp.path() / "cache");
  CHECK(to_json(load_plan(run_dir)) == to_json(plan));
  CHECK(plan.run_id == "r1");
  CHECK(plan.command == req.argv);
  CHECK(plan.repo == repo.string());
  CHECK(plan.worker_sha256 == worker_digest_now());
  REQUIRE(plan.variants.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const Variant& v = plan.variants[i];
    CHECK(v.source == resolved.variants[i].source);
    CHECK(v.device == "cpu");
    CHECK(v.plugin_sha256 == sha256_file(run_dir / v.plugin));
    // A run of --baseline/--candidate has no settings, and its plan none of their fields.
    CHECK(v.build.empty());
    CHECK_FALSE(to_json(plan)["variants"][i].contains("build"));
    CHECK_FALSE(to_json(plan)["variants"][i].contains("run"));
  }
  CHECK(plan.variants[0].name == "baseline");
  CHECK(plan.variants[1].name == "candidate");
  CHECK(plan.shapes == expand_timings(resolved.grid.shapes, {"kernel"}));
  // A CPU plugin runs on the host alone, whatever --gpus says.
  CHECK(plan.schedule.gpus == 1);
  CHECK(plan.machine.size() == 1);
  // The schedule, each arm placed on the lane's CPUs (placement.hpp).
  std::vector<Task> placed = make_schedule(plan.shapes, plan.schedule);
  for (auto& t : placed) t.cpus = plan.tasks.front().cpus;
  CHECK(!plan.tasks.front().cpus.empty());
  CHECK(plan.tasks == placed);
  CHECK(plan.tasks.size() == 8);
  // The plan it wrote is one resume accepts.
  CHECK_NOTHROW(check_resumable(run_dir, plan, kWorker));
}

TEST_CASE("planner: a Python plugin's plan records its interpreter and its sources' digest") {
  TempDir tmp{"abh-make-plan"};
  const fs::path repo = tmp.path() / "repo";
  sh(std::string(ABH_SOURCE_DIR) + "/examples/make-demo-repo.sh numpy " + quote(repo) +
     " >/dev/null");
  PlanRequest req;
  req.repo = repo.string();
  req.baseline = "HEAD~1";
  req.candidate = "HEAD";
  req.target = "numpy";
  req.python = "/usr/bin/python3";
  req.grid = (tmp.path() / "grid.json").string();
  write_grid(req.grid, {24});
  ResolvedRequest resolved = resolve_request(req);
  const fs::path run_dir = tmp.path() / "runs" / "r1";
  fs::create_directories(run_dir);

  Plan plan = make_plan(req, resolved, "r1", run_dir, kWorker, tmp.path() / "cache");
  CHECK(to_json(load_plan(run_dir)) == to_json(plan));
  REQUIRE(plan.python);
  CHECK(plan.python->requested == "/usr/bin/python3");
  CHECK(plan.python->executable == "/usr/bin/python3");
  CHECK_FALSE(plan.python->distributions.empty());
  for (const auto& v : plan.variants) {
    CHECK(v.is_python());
    CHECK(v.plugin == "variants/" + v.name + "/src");
    CHECK(v.plugin_sha256 == sha256_tree(run_dir / v.plugin));
    CHECK(v.device == "cpu");  // as the manifest says: nothing was imported
    CHECK(v.build_cache_key.empty());
    CHECK(v.libraries.empty());
    CHECK(v.recipe.env.empty());
  }
  CHECK(plan.variants[0].plugin_sha256 != plan.variants[1].plugin_sha256);
  CHECK_NOTHROW(check_resumable(run_dir, plan, kWorker));
  // An edit of the sources the arms import is a changed plugin.
  test::write(run_dir / "variants/candidate/src/kernels/gemm.py", "edited\n");
  CHECK(starts_with_refusal(usage_error_of([&] { check_resumable(run_dir, plan, kWorker); }),
                            run_dir, "the candidate plugin variants/candidate/src changed"));
}

TEST_CASE("planner: run --resume flags must describe the plan's sweep") {
  Request r;
  const fs::path run_dir = r.tmp.path() / "run";
  Plan plan;
  for (const char* rev : {"HEAD~1", "HEAD"}) {
    Variant v;
    v.name = plan.variants.empty() ? "baseline" : "candidate";
    v.source.requested = rev;
    plan.variants.push_back(v);
  }
  plan.shapes = load_grid(r.req.grid).shapes;
  plan.repo = r.req.repo;
  plan.plugin_target = "cpu";
  plan.machine = {Environment{}};
  plan.tasks = make_schedule(plan.shapes, plan.schedule);
  const std::vector<int> allowed = allowed_cpus("");
  for (auto& t : plan.tasks) t.cpus = {allowed.back()};
  CHECK_NOTHROW(check_same_sweep(run_dir, plan, r.req, kWorker));
  const auto refusal_of = [&](const std::string& given, const std::string& planned) {
    return "cannot resume " + run_dir.string() + ": " + given + " differs from the plan's " +
           planned + "; give the plan's value, or continue with `abharness resume " +
           run_dir.string() + "`, which takes every setting from the plan";
  };
  SUBCASE("another --until-decided, --rounds, --schedule or --schedule-seed") {
    r.req.schedule.until_decided = 3;
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          refusal_of("--until-decided 3", "until_decided 0"));
    // auto accepts what auto chose, and only that.
    r.req.schedule.until_decided = 0;
    r.req.schedule.until_decided_auto = true;
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          refusal_of("--until-decided auto", "until_decided 0"));
    plan.schedule.until_decided_auto = true;
    plan.schedule.until_decided = 3;
    CHECK_NOTHROW(check_same_sweep(run_dir, plan, r.req, kWorker));
    plan.schedule.until_decided_auto = false;
    plan.schedule.until_decided = 0;
    r.req.schedule = plan.schedule;
    r.req.schedule.rounds = 2;
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          refusal_of("--rounds 2", "rounds 1"));
    r.req.schedule = plan.schedule;
    r.req.schedule.name = "abba";
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          refusal_of("--schedule abba", "schedule aba"));
    r.req.schedule = plan.schedule;
    r.req.schedule.seed = 7;
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          refusal_of("--schedule-seed 7", "seed 0"));
  }
  SUBCASE("another --target or --repo") {
    r.req.target = "cuda";
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          refusal_of("--target cuda", "target cpu"));
    r.req.target = "cpu";
    r.req.repo = r.tmp.path().string();
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          refusal_of("--repo " + r.tmp.path().string(), "repository " + plan.repo));
  }
  SUBCASE("--cpus: the plan's placement passes, another is refused") {
    r.req.cpus = std::to_string(allowed.back());
    CHECK_NOTHROW(check_same_sweep(run_dir, plan, r.req, kWorker));
    if (allowed.size() > 1) {
      const std::string other = std::to_string(allowed.front());
      r.req.cpus = other;
      CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
            refusal_of("--cpus " + other + " (arms of lane 0 on CPU(s) " + other + ")",
                       "placement (CPU(s) " + std::to_string(allowed.back()) + ")"));
    }
  }
  SUBCASE("other settings") {
    r.req.settings.min_samples = 3;
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          "cannot resume " + run_dir.string() +
              ": the measurement settings given differ from the plan's: min_samples 3 (the "
              "plan's " +
              std::to_string(plan.settings.min_samples) +
              ") (an option not given counts as its default); give the plan's values, or "
              "continue with `abharness resume " +
              run_dir.string() + "`, which takes every setting from the plan");
  }
  SUBCASE("other revisions") {
    r.req.candidate = "main";
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          "cannot resume " + run_dir.string() + ": the plan compares 'HEAD~1' with 'HEAD'");
  }
  SUBCASE("another grid") {
    write_grid(r.req.grid, {32});
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          "cannot resume " + run_dir.string() + ": --grid " + r.req.grid +
              " differs from the plan's shapes");
  }
  SUBCASE("no grid given") {
    r.req.grid.clear();
    CHECK_NOTHROW(check_same_sweep(run_dir, plan, r.req, kWorker));
  }
  SUBCASE("another interpreter") {
    plan.python = Interpreter{};
    plan.python->requested = "/usr/bin/python3";
    r.req.python = "/usr/bin/python3";
    CHECK_NOTHROW(check_same_sweep(run_dir, plan, r.req, kWorker));
    r.req.python = "python3.12";
    CHECK(usage_error_of([&] { check_same_sweep(run_dir, plan, r.req, kWorker); }) ==
          "cannot resume " + run_dir.string() +
              ": --python python3.12 differs from the plan's interpreter '/usr/bin/python3'");
  }
}

TEST_CASE("planner: resume refuses a worker binary that changed since the plan") {
  PlannedRun run;
  CHECK(run.refusal() == "(no abh::UsageError thrown)");
  run.plan.worker_sha256 = sha256_hex("another worker");
  const std::string msg = run.refusal();
  CHECK(starts_with_refusal(msg, run.dir,
                            "the worker binary changed since the plan (plan " +
                                run.plan.worker_sha256.substr(0, 12) + ", now " +
                                worker_digest_now().substr(0, 12) + ")"));
}

TEST_CASE("planner: resume refuses a plugin that is missing or changed") {
  PlannedRun run;
  const Variant& cand = run.plan.variants[1];
  SUBCASE("missing") {
    fs::remove(run.dir / cand.plugin);
    CHECK(starts_with_refusal(run.refusal(), run.dir,
                              "the candidate plugin variants/candidate/libk.so is missing"));
  }
  SUBCASE("changed") {
    const std::string planned = cand.plugin_sha256;
    test::write(run.dir / cand.plugin, "rebuilt");
    CHECK(starts_with_refusal(run.refusal(), run.dir,
                              "the candidate plugin variants/candidate/libk.so changed (plan " +
                                  planned.substr(0, 12) + ", now " +
                                  sha256_hex("rebuilt").substr(0, 12) + ")"));
  }
}

TEST_CASE("planner: resume refuses a WORKTREE variant whose working tree changed") {
  PlannedRun run;
  GitRepo repo{run.plan.repo};
  repo.write("kernel.cpp", "int k() { return 1; }\n");
  repo.commit_all("one");
  repo.write("kernel.cpp", "int k() { return 2; }\n");  // an uncommitted edit
  Variant& cand = run.plan.variants[1];
  cand.source = compute_source_identity(repo.root(), kWorktree);
  CHECK(run.refusal() == "(no abh::UsageError thrown)");
  repo.write("notes.txt", "scratch\n");  // a new untracked file changes the identity
  const std::string now = compute_source_identity(repo.root(), kWorktree).digest;
  CHECK(starts_with_refusal(
      run.refusal(), run.dir,
      "the working tree of " + run.plan.repo + " changed since the plan (candidate identity " +
          cand.source.digest.substr(0, 12) + ", now " + now.substr(0, 12) + ")"));
}

TEST_CASE("planner: resume refuses a machine that differs from the plan") {
  PlannedRun run;
  run.plan.machine[0].hostname = "some-other-host";
  CHECK(starts_with_refusal(run.refusal(), run.dir,
                            "the machine differs from the plan: hostname was \"some-other-host\", "
                            "now \"" +
                                probe_host().hostname + "\""));
}

#endif  // ABH_HAVE_ORCHESTRATOR

TEST_CASE("planner: a variant's run setting that changes a grid parameter is noted, naming it") {
  ResolvedRequest r;
  r.grid.shapes = {Shape{"m32", "", json{{"m", 32}, {"n", 8}}, ""},
                   Shape{"m8", "", json{{"m", 8}, {"n", 8}}, ""}};
  r.variants = {{VariantSpec{"a", "HEAD~1", {}, json::object()}, {}},
                {VariantSpec{"b", "HEAD", {}, json{{"m", 8}, {"block", 64}}}, {}}};
  const std::vector<std::string> notes = run_settings_replacing_params(r);
  REQUIRE(notes.size() == 1);  // `block` is no grid parameter; m8's m is already 8
  CHECK(notes[0] ==
        "variant b's run setting m = 8 replaces the grid's m in 1 shape(s): m32 (32); its arms of "
        "those shapes measure another problem than the shape's id says");
  r.variants[1].spec.run = json{{"block", 64}};
  CHECK(run_settings_replacing_params(r).empty());
}
