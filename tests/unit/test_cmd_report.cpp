// The report flags that run, resume and report share: each binds straight into the statistics
// options (StatsOptions) or the report's own flags, with the statistics' defaults.
#ifdef ABH_HAVE_ORCHESTRATOR

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "run_command.hpp"

using namespace abh;

namespace {

// Parses `args` with the report flags, as `abharness report` would.
ReportFlags parse(std::vector<std::string> args) {
  CLI::App app;
  ReportFlags f;
  add_report_flags(app, f);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  app.parse(args);
  return f;
}

}  // namespace

TEST_CASE("report flags: the defaults are the statistics' defaults") {
  ReportFlags f = parse({});
  CHECK(f.stats == StatsOptions{});
  CHECK_FALSE(f.fail_on_regression);
  CHECK_FALSE(f.quiet);
  CHECK(f.color == "auto");
  CHECK(f.print == "terminal");
}

TEST_CASE("report flags: each statistics flag sets its field of StatsOptions") {
  ReportFlags f = parse({"--noise-band", "0.02", "--confidence", "0.9", "--resamples", "500",
                         "--seed", "18446744073709551615", "--raw-clocks", "--plain-medians"});
  StatsOptions want;
  want.noise_band = 0.02;
  want.confidence = 0.9;
  want.resamples = 500;
  want.seed = 18446744073709551615ull;
  want.clock_normalize = false;
  want.spread_ties = false;
  CHECK(f.stats == want);
  CHECK(parse({}).stats.spread_ties);
  // An explicit false leaves the comparison at one clock, as it did when the flag was a bool.
  CHECK(parse({"--raw-clocks=false"}).stats.clock_normalize);
  CHECK_FALSE(parse({"--raw-clocks=true"}).stats.clock_normalize);
}

TEST_CASE("report flags: the report's own flags and a format that does not exist") {
  ReportFlags f = parse({"--fail-on-regression", "-q", "--color", "never", "--print", "json"});
  CHECK(f.fail_on_regression);
  CHECK(f.quiet);
  CHECK(f.color == "never");
  CHECK(f.print == "json");
  CHECK_THROWS_AS(parse({"--print", "html"}), CLI::ValidationError);
}

#endif  // ABH_HAVE_ORCHESTRATOR
