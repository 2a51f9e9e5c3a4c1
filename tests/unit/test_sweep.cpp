// The order in which a lane runs its steps (orchestrator/sweep.hpp), checked through its seam
// (worker_starter.hpp) with fake workers that run nothing and log every call the sweep makes:
// which worker starts when, how many are started ahead, that each has its turn only after the
// worker before it ended, that a warm-up precedes the arms of each variant, and that a failed arm
// leaves a failure record while the lane goes on. Then the same with real processes started by the
// real starter (arm_worker.hpp): the turn reaches a worker only after the one before it exited,
// and a lane that stops, or whose process is killed, leaves none of its workers running.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "arm_worker.hpp"
#include "fake_workers.hpp"
#include "model/worker_protocol.hpp"
#include "plan_fixture.hpp"
#include "sweep.hpp"
#include "system/json_io.hpp"
#include "test_support.hpp"

using namespace abh;
using namespace abh::test;
namespace fs = std::filesystem;

namespace {

// The fixture plan (two shapes, ABA, one CPU lane), keeping only its first `shapes` shapes, with
// `ahead` workers started ahead.
Plan plan_of(int shapes, int ahead) {
  Plan p = test::fixture_plan();
  p.shapes.resize(static_cast<size_t>(shapes));
  p.tasks.resize(static_cast<size_t>(3 * shapes));
  p.schedule.start_ahead = ahead;
  return p;
}

SweepOptions quiet() {
  SweepOptions o;
  o.quiet = true;
  return o;
}

// Runs every arm of the plan; returns what the sweep counted.
SweepSummary sweep(const fs::path& dir, const Plan& p, const WorkerStarter& workers,
                   const std::set<std::string>& done = {}) {
  return run_sweep(dir, p, workers, done, quiet());
}

using Log = std::vector<std::string>;

// The calls a lane of one shape (two warm-ups, three arms) makes with `ahead` started ahead.
Log log_of_one_shape(int ahead) {
  test::TempDir tmp;
  FakeWorkers w;
  sweep(tmp.path(), plan_of(1, ahead), w);
  return w.log();
}

}  // namespace

TEST_CASE("sweep order: without workers started ahead, each starts once the one before ended") {
  CHECK(log_of_one_shape(0) == Log{
                                   "start warmup m32/A1",
                                   "go warmup m32/A1",
                                   "finish warmup m32/A1",
                                   "start warmup m32/B",
                                   "go warmup m32/B",
                                   "finish warmup m32/B",
                                   "start m32/A1",
                                   "go m32/A1",
                                   "finish m32/A1",
                                   "start m32/B",
                                   "go m32/B",
                                   "finish m32/B",
                                   "start m32/A2",
                                   "go m32/A2",
                                   "finish m32/A2",
                               });
}

// Started ahead, the first worker of each variant (here each variant's warm-up) is asked whether it
// loaded before the first turn.
TEST_CASE("sweep order: one worker started ahead has its turn right after the previous finish") {
  CHECK(log_of_one_shape(1) == Log{
                                   "start warmup m32/A1",
                                   "start warmup m32/B",
                                   "loaded warmup m32/A1",
                                   "loaded warmup m32/B",
                                   "go warmup m32/A1",
                                   "finish warmup m32/A1",
                                   "go warmup m32/B",
                                   "start m32/A1",
                                   "finish warmup m32/B",
                                   "go m32/A1",
                                   "start m32/B",
                                   "finish m32/A1",
                                   "go m32/B",
                                   "start m32/A2",
                                   "finish m32/B",
                                   "go m32/A2",
                                   "finish m32/A2",
                               });
}

TEST_CASE("sweep order: a worker that released its GPU gives the next its turn before it ends") {
  test::TempDir tmp;
  FakeWorkers w;
  w.endings["m32/A1"].releases = true;
  w.endings["m32/B"].releases = true;
  sweep(tmp.path(), plan_of(1, 1), w);
  const Log log = w.log();
  CHECK(Log(log.begin() + 9, log.end()) == Log{
                                               "go m32/A1",
                                               "start m32/B",
                                               "released m32/A1",
                                               "go m32/B",
                                               "finish m32/A1",
                                               "start m32/A2",
                                               "released m32/B",
                                               "go m32/A2",
                                               "finish m32/B",
                                               "finish m32/A2",
                                           });
}

TEST_CASE("sweep order: two workers started ahead") {
  CHECK(log_of_one_shape(2) == Log{
                                   "start warmup m32/A1",
                                   "start warmup m32/B",
                                   "start m32/A1",
                                   "loaded warmup m32/A1",
                                   "loaded warmup m32/B",
                                   "go warmup m32/A1",
                                   "finish warmup m32/A1",
                                   "go warmup m32/B",
                                   "start m32/B",
                                   "finish warmup m32/B",
                                   "go m32/A1",
                                   "start m32/A2",
                                   "finish m32/A1",
                                   "go m32/B",
                                   "finish m32/B",
                                   "go m32/A2",
                                   "finish m32/A2",
                               });
}

TEST_CASE("sweep order: N started ahead, each turn after the end of the step before, any N") {
  for (int ahead : {0, 1, 2, 3, 7, 16}) {
    CAPTURE(ahead);
    test::TempDir tmp;
    FakeWorkers w;
    sweep(tmp.path(), plan_of(2, ahead), w);
    const Log log = w.log();
    // The steps in the order they were started: warm-ups first, then the arms in plan order.
    const Log order = w.started();
    REQUIRE(order == Log{"warmup m32/A1", "warmup m32/B", "m32/A1", "m32/B", "m32/A2", "m64/A1",
                         "m64/B", "m64/A2"});
    const int steps = static_cast<int>(order.size());
    auto at = [&](const std::string& e) {
      return std::find(log.begin(), log.end(), e) - log.begin();
    };
    for (int k = 0; k < steps; ++k) {
      CAPTURE(order[k]);
      CHECK(at("start " + order[k]) < at("go " + order[k]));
      CHECK(at("go " + order[k]) < at("finish " + order[k]));
      if (k > 0) CHECK(at("finish " + order[k - 1]) < at("go " + order[k]));
      CHECK(std::count(log.begin(), log.end(), "go " + order[k]) == 1);
    }
    // While step k measures, the next `ahead` steps' workers have been started, no more.
    std::vector<int> want;
    for (int k = 0; k < steps; ++k) want.push_back(std::min(steps, k + 1 + ahead));
    CHECK(w.started_at_finish() == want);
  }
}

TEST_CASE("sweep: the first turn waits for the gate, while the workers started ahead load") {
  for (int ahead : {0, 2}) {
    CAPTURE(ahead);
    test::TempDir tmp;
    FakeWorkers w;
    SweepOptions opt = quiet();
    opt.before_first_turn = [&] { w.record(0, "gate"); };
    run_sweep(tmp.path(), plan_of(1, ahead), w, {}, opt);
    const Log log = w.log();
    const auto gate = std::find(log.begin(), log.end(), "gate") - log.begin();
    CHECK(std::count(log.begin(), log.end(), "gate") == 1);
    CHECK(gate < std::find(log.begin(), log.end(), "go warmup m32/A1") - log.begin());
    // Started ahead, the first 1 + N workers load meanwhile, and the first of each variant has
    // said it loaded; a worker that is not started ahead measures from its start, so it starts
    // after the gate.
    CHECK(gate == (ahead ? 5 : 0));
  }
  // A gate that throws (a new run's dry run refused a shape) stops the lane before any turn.
  test::TempDir tmp;
  FakeWorkers w;
  SweepOptions opt = quiet();
  opt.before_first_turn = [] { throw UsageError("the dry run refused shape m32"); };
  CHECK_THROWS_WITH_AS(run_sweep(tmp.path(), plan_of(1, 2), w, {}, opt),
                       doctest::Contains("refused shape m32"), UsageError);
  for (const auto& e : w.log()) CHECK((e.rfind("start ", 0) == 0 || e.rfind("loaded ", 0) == 0));
}

TEST_CASE("sweep: started ahead, the first worker of each variant has loaded before the gate") {
  for (int ahead : {0, 1, 2, 3, 7}) {
    CAPTURE(ahead);
    test::TempDir tmp;
    FakeWorkers w;
    // A later worker of a variant is not asked before the first turn: its loading is its turn's
    // business (m32/A1, baseline's second worker, is among the first 1 + N from N = 2).
    w.endings["m32/A1"].loads = false;
    SweepOptions opt = quiet();
    opt.before_first_turn = [&] { w.record(0, "gate"); };
    const SweepSummary s = run_sweep(tmp.path(), plan_of(2, ahead), w, {}, opt);
    CHECK(s.ran == 6);
    CHECK(s.failed == 0);
    const Log log = w.log();
    Log asked;
    for (const auto& e : log)
      if (e.rfind("loaded ", 0) == 0) asked.push_back(e.substr(7));
    if (ahead == 0) {
      // Not started ahead, a worker loads in its turn: nobody waits for it before.
      CHECK(asked.empty());
      continue;
    }
    // Once each, the first started worker of each variant: its warm-up.
    CHECK(asked == Log{"warmup m32/A1", "warmup m32/B"});
    auto at = [&](const std::string& e) {
      return std::find(log.begin(), log.end(), e) - log.begin();
    };
    const auto gate = at("gate");
    const auto first_go =
        std::find_if(log.begin(), log.end(),
                     [](const std::string& e) { return e.rfind("go ", 0) == 0; }) -
        log.begin();
    CHECK(gate < first_go);
    // After the first 1 + N workers started, before the gate (the dry run) and any turn.
    const auto starts = static_cast<long>(std::min<size_t>(8, static_cast<size_t>(1 + ahead)));
    for (long k = 0; k < starts; ++k) CHECK(log[static_cast<size_t>(k)].rfind("start ", 0) == 0);
    for (const auto& step : asked) {
      CAPTURE(step);
      CHECK(at("loaded " + step) >= starts);
      CHECK(at("loaded " + step) < gate);
    }
  }
  // Each lane asks its own first workers, on its own.
  test::TempDir tmp;
  Plan p = test::fixture_plan(2);
  p.schedule.start_ahead = 1;
  FakeWorkers w;
  CHECK(sweep(tmp.path(), p, w).ran == 6);
  for (int lane : {0, 1}) {
    CAPTURE(lane);
    const std::string shape = p.shapes[static_cast<size_t>(lane)].id;
    const Log log = w.log(lane);
    REQUIRE(log.size() > 4);
    CHECK(Log(log.begin(), log.begin() + 5) ==
          Log{"start warmup " + shape + "/A1", "start warmup " + shape + "/B",
              "loaded warmup " + shape + "/A1", "loaded warmup " + shape + "/B",
              "go warmup " + shape + "/A1"});
  }
}

TEST_CASE("sweep: a plugin that does not load in its first worker refuses the run, unmeasured") {
  for (const bool python : {false, true}) {
    CAPTURE(python);
    test::TempDir tmp;
    Plan p = plan_of(2, 2);
    if (python) {
      p.variants[1].recipe.python = PythonPlugin{"bench.kernel", "make_problem", "cuda", ""};
      p.python = test::fixture_interpreter();
    }
    FakeWorkers w;
    w.endings["warmup m32/B"] = {
        exited(2), false,
        "loading the plugin\n" + worker_protocol::error_line("cannot load the plugin: no GEMM") +
            "\n",
        false};
    bool gated = false;
    SweepOptions opt = quiet();
    opt.before_first_turn = [&] { gated = true; };
    const std::string e = test::usage_error_of([&] { run_sweep(tmp.path(), p, w, {}, opt); });
    CAPTURE(e);
    const std::string label =
        python ? "the candidate Python plugin bench.kernel.make_problem (under /usr/bin/python3)"
               : "the candidate plugin variants/candidate/libkernel.so";
    CHECK(e.rfind(
              label +
                  " failed in its first worker, before its turn (m32/B, its warm-up: exit code 2: "
                  "cannot load the plugin: no GEMM; log ",
              0) == 0);
    CHECK(test::contains(e, log_path(tmp.path(), *p.find_task("m32", "B"), "warmup.err").string()));
    CHECK(test::contains(e,
                         "fix the plugin or its environment and run again (nothing was "
                         "measured)"));
    // Neither the gate (a new run's dry run) nor any turn came; the workers' logs are all.
    CHECK_FALSE(gated);
    const Log log = w.log();
    CHECK(log == Log{"start warmup m32/A1", "start warmup m32/B", "start m32/A1",
                     "loaded warmup m32/A1", "loaded warmup m32/B", "finish warmup m32/B"});
    for (const auto& t : p.tasks) {
      CHECK_FALSE(fs::exists(result_path(tmp.path(), t)));
      CHECK_FALSE(fs::exists(log_path(tmp.path(), t, "failure.json")));
    }
  }
}

TEST_CASE("sweep: a failed arm leaves a failure record and no result, and the lane goes on") {
  test::TempDir tmp;
  const Plan p = plan_of(2, 1);
  FakeWorkers w;
  w.endings["m32/B"] = {exited(3), true, "loading\nabharness-worker: error: the plugin said no\n"};
  w.endings["m64/A1"] = {exited(0), false, ""};
  ExitStatus killed;
  killed.kind = ExitStatus::Kind::signaled;
  killed.signal = SIGSEGV;
  w.endings["m64/A2"] = {killed, false, ""};
  // A failure record of an earlier attempt at an arm that now succeeds is not evidence of it.
  test::write(tmp.path() / "logs/m32/A2.failure.json", "{}");
  REQUIRE(fs::exists(log_path(tmp.path(), *p.find_task("m32", "A2"), "failure.json")));

  const SweepSummary s = sweep(tmp.path(), p, w);
  CHECK(s.ran == 6);
  CHECK(s.failed == 3);
  const Log log = w.log();
  for (const char* arm : {"m32/A2", "m64/A1", "m64/B", "m64/A2"})
    CHECK(std::count(log.begin(), log.end(), std::string("finish ") + arm) == 1);

  auto failure = [&](const char* shape, const char* arm) {
    return read_json_file(log_path(tmp.path(), *p.find_task(shape, arm), "failure.json"));
  };
  const json b = failure("m32", "B");
  CHECK(b["shape"] == "m32");
  CHECK(b["arm"] == "B");
  CHECK(b["variant"] == "candidate");
  CHECK(b["reason"] == "exit code 3: the plugin said no");
  CHECK(b["stderr"] == "logs/m32/B.err");
  CHECK(test::contains(b["stderr_tail"].get<std::string>(), "the plugin said no"));
  // What a failed worker wrote is not evidence: its result is removed.
  CHECK_FALSE(fs::exists(result_path(tmp.path(), *p.find_task("m32", "B"))));
  CHECK(failure("m64", "A1")["reason"] == "the worker exited 0 but wrote no result");
  CHECK(failure("m64", "A2")["reason"] == killed.describe());
  for (const char* arm : {"A1", "A2"})
    CHECK(fs::exists(result_path(tmp.path(), *p.find_task("m32", arm))));
  CHECK(fs::exists(result_path(tmp.path(), *p.find_task("m64", "B"))));
  CHECK_FALSE(fs::exists(log_path(tmp.path(), *p.find_task("m32", "A2"), "failure.json")));
}

TEST_CASE("sweep: a failed warm-up is not recorded, and the arms run after it") {
  test::TempDir tmp;
  const Plan p = plan_of(1, 1);
  FakeWorkers w;
  w.endings["warmup m32/A1"] = {exited(3), false, "abharness-worker: error: cold\n"};
  const SweepSummary s = sweep(tmp.path(), p, w);
  CHECK(s.ran == 3);
  CHECK(s.failed == 0);
  for (const auto& t : p.tasks) {
    CHECK(fs::exists(result_path(tmp.path(), t)));
    CHECK_FALSE(fs::exists(log_path(tmp.path(), t, "failure.json")));
  }
}

TEST_CASE("sweep: arms already valid are skipped, and a Python variant gets its warm-up too") {
  test::TempDir tmp;
  Plan p = plan_of(1, 1);
  p.variants[1].recipe.python = PythonPlugin{"bench.kernel", "make_problem", "cpu", ""};
  FakeWorkers w;
  const SweepSummary s = sweep(tmp.path(), p, w, {result_key(tmp.path(), p.tasks[0])});
  CHECK(s.skipped == 1);
  CHECK(s.ran == 2);
  // Each variant's warm-up takes its first arm still to run; the Python candidate's too (without
  // it the first arm of NumPy shapes ran 7-25 % slower than their last).
  CHECK(w.started() == Log{"warmup m32/B", "warmup m32/A2", "m32/B", "m32/A2"});
}

TEST_CASE("sweep: one lane per GPU, each with its own warm-ups, its GPU and its order") {
  test::TempDir tmp;
  Plan p = test::fixture_plan(2);
  p.schedule.start_ahead = 1;
  FakeWorkers w;
  const SweepSummary s = sweep(tmp.path(), p, w);
  CHECK(s.ran == 6);
  for (int lane : {0, 1}) {
    CAPTURE(lane);
    const std::string shape = p.shapes[static_cast<size_t>(lane)].id;
    CHECK(w.uuid_seen(lane) == "GPU-" + std::to_string(lane));
    CHECK(w.started(lane) == Log{"warmup " + shape + "/A1", "warmup " + shape + "/B", shape + "/A1",
                                 shape + "/B", shape + "/A2"});
    CHECK(w.started_at_finish(lane) == std::vector<int>{2, 3, 4, 5, 5});
  }
}

// ---- real processes -------------------------------------------------------------------------

namespace {

// A shell script standing in for abharness-worker, started by the real starter.
fs::path write_worker(const fs::path& dir, const std::string& body) {
  const fs::path p = dir / "fake-worker.sh";
  test::write(p, "#!/bin/sh\n" + body);
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> out;
  std::istringstream in(test::slurp(p));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Waits (up to a minute: this is not a timing check) until `p` has `n` lines.
bool wait_for_lines(const fs::path& p, size_t n) {
  for (int i = 0; i < 600; ++i) {
    if (lines_of(p).size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Whether `pid` is still a running process whose command line holds `mark` (a zombie nobody has
// reaped yet runs nothing).
bool running(const std::string& pid, const std::string& mark) {
  const std::string stat = test::slurp("/proc/" + pid + "/stat");
  const auto close = stat.rfind(')');
  if (stat.empty() || close == std::string::npos || stat.substr(close + 2, 1) == "Z") return false;
  std::string cmdline = test::slurp("/proc/" + pid + "/cmdline");
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  return test::contains(cmdline, mark);
}

// The pids listed in `p` that still run a `sleep <mark>`, waiting up to a minute for them to go.
std::vector<std::string> survivors(const fs::path& p, const std::string& mark) {
  std::vector<std::string> left;
  for (int i = 0; i < 600; ++i) {
    left.clear();
    for (const auto& pid : lines_of(p))
      if (running(pid, mark)) left.push_back(pid);
    if (left.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return left;
}

// A worker that records its pid and then sleeps, never reading its turn: started ahead, it waits.
struct SleepingWorkers {
  test::TempDir tmp;
  fs::path pids = tmp.path() / "pids";
  std::string mark = "600." + std::to_string(::getpid());
  fs::path worker =
      write_worker(tmp.path(), "echo $$ >> '" + pids.string() + "'\nexec sleep " + mark + "\n");
  Plan plan = plan_of(2, 2);
  WorkerProcesses real{plan, worker};
  // Whatever a failed test left running is killed, by pid.
  ~SleepingWorkers() {
    for (const auto& pid : lines_of(pids))
      if (running(pid, "sleep " + mark)) ::kill(std::stoi(pid), SIGKILL);
  }
};

// The real starter, throwing when asked for its `fail_at`-th worker (counting from 0): a lane
// that stops with workers started ahead. Each real start returns once its worker runs.
class StopAt : public WorkerStarter {
 public:
  StopAt(const SleepingWorkers& w, int fail_at) : w_(w), fail_at_(fail_at) {}
  std::unique_ptr<ArmProcess> start(const RunDirFs& run, const Lane& lane,
                                    const Step& step) const override {
    if (n_ == fail_at_) throw Error("cannot start the worker of " + step_name(step) + " (test)");
    auto p = w_.real.start(run, lane, step);
    REQUIRE(wait_for_lines(w_.pids, static_cast<size_t>(++n_)));
    return p;
  }

 private:
  const SleepingWorkers& w_;
  int fail_at_;
  mutable int n_ = 0;
};

}  // namespace

TEST_CASE("sweep, real workers: a worker started ahead gets its turn after the one before exited") {
  test::TempDir tmp;
  const fs::path events = tmp.path() / "events";
  // It logs its start, the word on its stdin when started ahead (having said there that it loaded,
  // as abharness-worker does), and its end. Its turn may come before it said it loaded, and the
  // orchestrator closes the socket after the word: like abharness-worker (MSG_NOSIGNAL), it takes
  // the EPIPE and reads the word still buffered, where a shell would die of SIGPIPE (it did, once,
  // in a CI run under load).
  const fs::path worker = write_worker(tmp.path(), "log='" + events.string() + "'\n" + R"(
trap '' PIPE
while [ $# -gt 0 ]; do
  case "$1" in --shape) s=$2; shift ;; --arm) a=$2; shift ;; --warmup) w="warmup " ;;
    --ahead) ahead=1 ;; esac
  shift
done
echo "start $w$s/$a" >> "$log"
[ -n "$ahead" ] && { printf 'loaded\n' >&0; read -r turn; echo "turn $w$s/$a $turn" >> "$log"; }
echo "end $w$s/$a" >> "$log"
)");
  Plan p = plan_of(1, 2);
  p.settings.arm_timeout_s = 600;
  const SweepSummary s = sweep(tmp.path(), p, WorkerProcesses(p, worker));
  CHECK(s.ran == 3);
  const Log log = lines_of(events);
  const Log steps = {"warmup m32/A1", "warmup m32/B", "m32/A1", "m32/B", "m32/A2"};
  auto at = [&](const std::string& e) {
    return std::find(log.begin(), log.end(), e) - log.begin();
  };
  for (size_t k = 0; k < steps.size(); ++k) {
    CAPTURE(steps[k]);
    REQUIRE(at("turn " + steps[k] + " go") < static_cast<long>(log.size()));
    if (k > 0) CHECK(at("end " + steps[k - 1]) < at("turn " + steps[k] + " go"));
  }
  // Each wrote no result: the sweep says so in its failure record, from the real log.
  CHECK(read_json_file(log_path(tmp.path(), p.tasks[0], "failure.json"))["reason"] ==
        "the worker exited 0 but wrote no result");
}

TEST_CASE(
    "sweep, real workers: a worker that says it released its GPU gives the turn before it ends") {
  test::TempDir tmp;
  const fs::path events = tmp.path() / "events";
  // Each says it released its GPU once its turn came, then ends only once the next one has had
  // its turn: the log's last turn is no longer its own (a minute at most: this is no timing check).
  const fs::path worker = write_worker(tmp.path(), "log='" + events.string() + "'\n" + R"sh(
while [ $# -gt 0 ]; do
  case "$1" in --shape) s=$2; shift ;; --arm) a=$2; shift ;; --warmup) w="warmup " ;; esac
  shift
done
printf 'loaded\n' >&0
read -r turn
echo "turn $w$s/$a $turn" >> "$log"
printf 'released\n' >&0
if [ "$w$s/$a" != m32/A2 ]; then
  for i in $(seq 600); do
    [ "$(grep '^turn' "$log" | tail -n1)" != "turn $w$s/$a $turn" ] && break
    sleep 0.1
  done
fi
echo "end $w$s/$a" >> "$log"
)sh");
  Plan p = plan_of(1, 2);
  p.settings.arm_timeout_s = 600;
  sweep(tmp.path(), p, WorkerProcesses(p, worker));
  const Log log = lines_of(events);
  const Log steps = {"warmup m32/A1", "warmup m32/B", "m32/A1", "m32/B", "m32/A2"};
  auto at = [&](const std::string& e) {
    return std::find(log.begin(), log.end(), e) - log.begin();
  };
  CAPTURE(log);
  for (size_t k = 1; k < steps.size(); ++k) {
    CAPTURE(steps[k]);
    REQUIRE(at("turn " + steps[k] + " go") < static_cast<long>(log.size()));
    CHECK(at("turn " + steps[k] + " go") < at("end " + steps[k - 1]));
  }
}

TEST_CASE("sweep, real workers: a first worker that ends before it loaded refuses the run") {
  test::TempDir tmp;
  const fs::path events = tmp.path() / "events";
  // The candidate's worker cannot load its plugin: it says why on its stderr and exits 2 without
  // a word on its socket. The others say they loaded and wait for their turn.
  const fs::path worker = write_worker(tmp.path(), "log='" + events.string() + "'\n" + R"(
while [ $# -gt 0 ]; do
  case "$1" in --shape) s=$2; shift ;; --arm) a=$2; shift ;; --warmup) w="warmup " ;; esac
  shift
done
echo "start $w$s/$a" >> "$log"
case "$a" in B*) echo "abharness-worker: error: cannot load the plugin: no GEMM" >&2; exit 2 ;; esac
printf 'loaded\n' >&0
read -r turn
echo "turn $w$s/$a $turn" >> "$log"
)");
  Plan p = plan_of(1, 2);
  p.settings.arm_timeout_s = 600;
  bool gated = false;
  SweepOptions opt = quiet();
  opt.before_first_turn = [&] { gated = true; };
  const std::string e =
      test::usage_error_of([&] { run_sweep(tmp.path(), p, WorkerProcesses(p, worker), {}, opt); });
  CHECK(e ==
        "the candidate plugin variants/candidate/libkernel.so failed in its first worker, "
        "before its turn (m32/B, its warm-up: exit code 2: cannot load the plugin: no GEMM; log " +
            log_path(tmp.path(), *p.find_task("m32", "B"), "warmup.err").string() +
            "); fix the plugin or its environment and run again (nothing was measured)");
  CHECK_FALSE(gated);
  for (const auto& l : lines_of(events)) CHECK(l.rfind("turn ", 0) != 0);
}

TEST_CASE("sweep, real workers: a lane that stops leaves none of its workers running") {
  SleepingWorkers w;
  // Two workers run (the first measuring, the next started ahead) when the third cannot start.
  StopAt stop(w, 2);
  const Lane lane{0, "", {&w.plan.tasks[0], &w.plan.tasks[1], &w.plan.tasks[2]}, {}};
  CHECK(test::error_of([&] { run_lanes(w.tmp.path(), w.plan, stop, {lane}, quiet()); }) ==
        "cannot start the worker of m32/A1 (test)");
  REQUIRE(lines_of(w.pids).size() == 2);
  CHECK(survivors(w.pids, "sleep " + w.mark).empty());
}

TEST_CASE("sweep, real workers: killing a lane's process leaves none of its workers running") {
  SleepingWorkers w;
  std::cout.flush();
  std::cerr.flush();
  const pid_t lane = ::fork();
  REQUIRE(lane >= 0);
  if (lane == 0) {
    // The lane's process: its workers never say they loaded (nor end), and it waits for them.
    try {
      run_sweep(w.tmp.path(), w.plan, w.real, {}, quiet());
    } catch (...) {
    }
    ::_exit(1);
  }
  const bool all_started = wait_for_lines(w.pids, 3);
  ::kill(lane, SIGKILL);
  int status = 0;
  ::waitpid(lane, &status, 0);
  REQUIRE(all_started);
  CHECK(lines_of(w.pids).size() == 3);
  CHECK(survivors(w.pids, "sleep " + w.mark).empty());
}
