// What a new run checks before its run directory exists (orchestrator/preflight.hpp): each option
// named with its fix, and a plan refused when it would be larger than its reader accepts, with the
// largest --until-decided (or --rounds) that fits, which is accepted and does fit.
#ifdef ABH_HAVE_ORCHESTRATOR

#include <doctest/doctest.h>

#include <regex>

#include "model/plan.hpp"
#include "model/timing.hpp"
#include "plan_request_fixture.hpp"
#include "planner.hpp"
#include "preflight.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"

using namespace abh;
using namespace abh::test;

TEST_CASE("preflight: every option is checked before anything is built") {
  Request r;
  SUBCASE("a noise band given as a percentage") {
    r.req.schedule.decision.noise_band = 2;
    CHECK(r.refusal() ==
          "--noise-band 2 (200%) is out of range: give a fraction in [0, 0.5), e.g. 0.01 for 1% "
          "(if 2% was meant: 0.02)");
  }
  SUBCASE("a noise band out of range") {
    r.req.schedule.decision.noise_band = 0.7;
    CHECK(r.refusal() ==
          "--noise-band 0.7 (70%) is out of range: give a fraction in [0, 0.5), e.g. 0.01 for 1%");
  }
  SUBCASE("a confidence of 95 or 1.5") {
    r.req.schedule.decision.confidence = 95;
    CHECK(contains(r.refusal(),
                   "--confidence 95 is out of range: give a level in (0.5, 1), "
                   "e.g. 0.95 (if 95% was meant: 0.95)"));
    r.req.schedule.decision.confidence = 1.5;
    CHECK(r.refusal() == "--confidence 1.5 is out of range: give a level in (0.5, 1), e.g. 0.95");
  }
  SUBCASE("a CPU this process may not use") {
    r.req.cpus = "1000";
    CHECK(r.refusal().rfind("--cpus 1000: CPU 1000 is not allowed to this process", 0) == 0);
  }
  SUBCASE("an interpreter that does not exist") {
    r.req.python = "/no/such/python3";
    CHECK(r.refusal().rfind("--python '/no/such/python3': no such interpreter", 0) == 0);
  }
  SUBCASE("--start-ahead out of range") {
    r.req.start_ahead = "17";
    CHECK(r.refusal().rfind("--start-ahead 17: use the number of workers", 0) == 0);
  }
  SUBCASE("an unknown schedule") {
    r.req.schedule.name = "abab";
    CHECK(r.refusal().rfind("--schedule 'abab' is unknown", 0) == 0);
  }
  SUBCASE("--share-host with a launcher that takes no host lock") {
    r.req.launcher.name = "slurm";
    r.req.schedule.until_decided = 0;
    r.req.schedule.share_host = true;
    CHECK(r.refusal().rfind("--share-host: with --launcher slurm no run holds this machine's lock",
                            0) == 0);
  }
  SUBCASE("a negative --until-decided") {
    r.req.schedule.until_decided = -1;
    CHECK(r.refusal() == "--until-decided must be >= 0");
  }
  CHECK_FALSE(fs::exists(r.tmp.path() / "runs"));
}

TEST_CASE("preflight: --shapes selects grid shapes before timings expand them, typos refused") {
  Request r;
  write_grid(r.tmp.path() / "grid.json", {32, 64, 96});
  r.req.shapes = "m64,m9*";
  r.req.settings.timing = "kernel,graph";
  const ResolvedRequest resolved = resolve_request(r.req);
  std::vector<std::string> ids;
  for (const Shape& s : expand_timings(resolved.grid.shapes, parse_timings(r.req.settings.timing)))
    ids.push_back(s.id);
  CHECK(ids == std::vector<std::string>{"m64@kernel", "m64@graph", "m96@kernel", "m96@graph"});
  r.req.shapes = "m64,m128";
  CHECK(r.refusal() == "--shapes 'm64,m128': pattern 'm128' matches no shape of the grid '" +
                           r.req.grid +
                           "' (its ids: m32, m64, m96); give shape ids or fnmatch "
                           "patterns such as m1_*");
}

TEST_CASE("preflight: a plan larger than its reader accepts is refused with what fits") {
  Request r;
  r.req.schedule.until_decided = 100000;
  const std::string msg = r.refusal();
  CHECK(msg.rfind("--until-decided 100000: the plan would hold 600006 tasks (2 shapes x 3 arms x "
                  "100001 blocks: --rounds 1 + --until-decided 100000), about ",
                  0) == 0);
  CHECK(contains(msg, "abharness reads plans of at most 64 MiB"));
  std::smatch m;
  REQUIRE(std::regex_search(msg, m, std::regex("give --until-decided ([0-9]+) or less")));
  const int most = std::stoi(m[1]);
  CHECK(most > 1000);
  r.req.schedule.until_decided = most;
  CHECK_NOTHROW(resolve_request(r.req));
  // What it lets through fits: the shapes and tasks as plan.json holds them, each task with the
  // lane's CPU, leave the reserve for the rest of the plan, and not much more.
  const Grid grid = load_grid(r.req.grid);
  std::uintmax_t bytes = kPlanReserveBytes;
  for (const Shape& s : grid.shapes) bytes += plan_bytes_of(s);
  for (Task& t : make_schedule(grid.shapes, r.req.schedule)) {
    t.cpus = {allowed_cpus("").back()};
    bytes += plan_bytes_of(t);
  }
  CHECK(bytes <= kPlanMaxBytes);
  CHECK(bytes > kPlanMaxBytes - kPlanMaxBytes / 20);
  r.req.schedule.until_decided = most + 1;
  CHECK(contains(r.refusal(), "give --until-decided " + m[1].str() + " or less"));
  // Too many planned blocks name --rounds.
  r.req.schedule.until_decided = 0;
  r.req.schedule.rounds = 10000000;
  CHECK(contains(r.refusal(), "--rounds 10000000: the plan would hold "));
  CHECK(contains(r.refusal(), " or less and no --until-decided"));
}

TEST_CASE("preflight: --until-decided auto plans what keeps the plan small, and is parsed") {
  Request r;
  r.req.until_decided = "auto";
  set_until_decided(r.req);
  CHECK(r.req.schedule.until_decided_auto);
  // Two shapes: room for every block auto could ask for.
  CHECK(resolve_request(r.req).auto_blocks_cap == 3);
  CHECK(auto_until_decided(true, 3) == 3);
  CHECK(auto_until_decided(false, 3) == 0);  // a launcher that cannot run them
  CHECK(auto_until_decided(true, 2) == 2);
  // 30,000 shapes take about 21 MB of plan in their one planned block: auto adds none (the plan
  // would be past kAutoPlanBytes), where a number given is held to the reader's limit only.
  std::vector<int> many(30000);
  for (int i = 0; i < 30000; ++i) many[i] = i + 1;
  write_grid(r.req.grid, many);
  CHECK(resolve_request(r.req).auto_blocks_cap == 0);
  // Numbers and auto only.
  for (const char* bad : {"", "-1", "two", "1e3", "9999999"}) {
    r.req.until_decided = bad;
    CHECK(usage_error_of([&] {
            set_until_decided(r.req);
          }).rfind("--until-decided " + std::string(bad) + ": give the most extra blocks", 0) == 0);
  }
  r.req.until_decided = "2";
  set_until_decided(r.req);
  CHECK(!r.req.schedule.until_decided_auto);
  CHECK(r.req.schedule.until_decided == 2);
}

#endif
