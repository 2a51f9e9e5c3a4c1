// The statistics options: the ranges validation accepts, and their one JSON mapping (the
// schedule's "decision" and the reports' "stats" objects).
#include <doctest/doctest.h>

#include <cmath>

#include "model/stats_options.hpp"
#include "system/error.hpp"

using namespace abh;

TEST_CASE("stats options: out-of-range options are usage errors") {
  StatsOptions o;
  CHECK_NOTHROW(validate(o));
  o.noise_band = -0.1;
  CHECK_THROWS_AS(validate(o), UsageError);
  o = {};
  o.confidence = 1;
  CHECK_THROWS_AS(validate(o), UsageError);
  o = {};
  o.resamples = 50;
  CHECK_THROWS_AS(validate(o), UsageError);
  o = {};
  o.confidence = 0.999;
  o.resamples = 1000;  // 0.5 replicates beyond each edge: too few
  CHECK_THROWS_AS(validate(o), UsageError);
  o = {};
  o.decisive_factor = 0;  // off
  CHECK_NOTHROW(validate(o));
  o.decisive_factor = 1.02;  // within the noise of a GPU arm: not decisive of anything
  CHECK_THROWS_WITH_AS(validate(o), doctest::Contains("--decisive-factor"), UsageError);
  o = {};
  o.prior_conflict_level = 0;  // off
  CHECK_NOTHROW(validate(o));
  o.prior_conflict_level = 0.5;  // every other shape would conflict
  CHECK_THROWS_WITH_AS(validate(o), doctest::Contains("--prior-conflict"), UsageError);
  o.prior_conflict_level = 1;
  CHECK_THROWS_AS(validate(o), UsageError);
  o = {};
  o.outlier_arm_sigmas = 0;  // off
  CHECK_NOTHROW(validate(o));
  o.outlier_arm_sigmas = 2;  // a normal arm two deviations off would be left out
  CHECK_THROWS_WITH_AS(validate(o), doctest::Contains("--outlier-arms"), UsageError);
  o.outlier_arm_sigmas = std::nan("");
  CHECK_THROWS_AS(validate(o), UsageError);
}

TEST_CASE("stats options: the JSON mapping round-trips, and without clock_normalize reads false") {
  StatsOptions o;
  o.noise_band = 0.02;
  o.confidence = 0.9;
  o.resamples = 500;
  o.seed = 7;
  const json j = to_json(o);
  CHECK(stats_options_from_json(j, "report.json.stats") == o);
  json old = j;
  old.erase("clock_normalize");
  CHECK_FALSE(stats_options_from_json(old, "report.json.stats").clock_normalize);
  // Written before the decisive factor: every one-arm verdict was confirmed.
  CHECK(j.at("decisive_factor") == 1.5);
  old.erase("decisive_factor");
  CHECK(stats_options_from_json(old, "report.json.stats").decisive_factor == 0);
  // Written before the prior-conflict check: every shape borrowed its prior.
  CHECK(j.at("prior_conflict_level") == 0.999);
  old.erase("prior_conflict_level");
  CHECK(stats_options_from_json(old, "report.json.stats").prior_conflict_level == 0);
  // Written before the median reference: tested against the pooled prior.
  CHECK(j.at("prior_conflict_median") == true);
  old.erase("prior_conflict_median");
  CHECK_FALSE(stats_options_from_json(old, "report.json.stats").prior_conflict_median);
  // Written before the own floor: a shape found borrowed its peers' spread, however narrow.
  CHECK(j.at("prior_conflict_own_floor") == true);
  old.erase("prior_conflict_own_floor");
  CHECK_FALSE(stats_options_from_json(old, "report.json.stats").prior_conflict_own_floor);
  // Written before disturbed arms were looked for: every valid arm counted.
  CHECK(j.at("outlier_arm_sigmas") == 5);
  old.erase("outlier_arm_sigmas");
  CHECK(stats_options_from_json(old, "report.json.stats").outlier_arm_sigmas == 0);
  // Written before tick ties were spread: plain medians.
  CHECK(j.at("spread_ties") == true);
  old.erase("spread_ties");
  CHECK_FALSE(stats_options_from_json(old, "report.json.stats").spread_ties);
  old.erase("seed");
  CHECK_THROWS_WITH_AS(stats_options_from_json(old, "report.json.stats"),
                       doctest::Contains("report.json.stats"), Error);
}
