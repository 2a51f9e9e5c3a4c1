// The statistics options of a report (docs/statistics.md): the noise band, the confidence level
// and the bootstrap's size and seed, and whether GPU arms are compared at one SM clock. A plan
// records them for its adaptive rule (ScheduleOptions::decision), a report for its figures, so
// they are part of the model that both documents share; stats/statistics.hpp computes with them.
#pragma once

#include <cstdint>
#include <string>

#include "system/json_io.hpp"

namespace abh {

// A tenth of the noise band: effects at the level of one arm smaller than this can neither make a
// verdict nor hide one. The precision rule's default target for an arm's median
// (worker/stopping.hpp), and the smallest between-arm spread that can conflict with the prior of
// the run's other shapes (report/report_builder.cpp).
inline constexpr double kBandFraction = 0.1;

struct StatsOptions {
  double noise_band = 0.01;  // ratios within [1 - band, 1 + band] count as "no change"
  double confidence = 0.95;  // two-sided confidence level of the bootstrap intervals
  int resamples = 2000;      // bootstrap replicates per shape
  std::uint64_t seed = 1;    // fixed by default so that a report is reproducible
  // Compare GPU arms at one SM clock (clock_adjusted in stats/statistics.hpp) when every arm of a
  // shape recorded the clock of each sample; false compares the raw times.
  bool clock_normalize = true;
  // A faster or slower verdict that rests on one candidate arm needs a confirmation block
  // (docs/statistics.md#confirmation) unless every arm of the shape was timed on the device
  // (model/timing.hpp: device_timer) and its interval lies wholly beyond this factor: lower end
  // >= f, or upper end <= 1/f. On the H200 the largest whole-process disturbance measured in an
  // A/A arm was 7.5 % (docs/measurements.md), far from 1.5x; host-timed arms of one build differ
  // by up to 1.85x on a loaded 2-core machine, so they always confirm. 0: every one-arm verdict
  // confirms. Read as 0 from documents written before it.
  double decisive_factor = 1.5;
  // A shape whose own between-arm variation conflicts with the prior its run's other shapes give
  // (an F test at this level, stats/statistics.hpp: conflicts_with_prior) is judged on its own
  // arms and left out of the others' priors (docs/statistics.md#variation-between-arms). 0: never,
  // as documents written before it read.
  double prior_conflict_level = 0.999;
  // Each shape is tested for that conflict against the median of the other shapes' estimates, not
  // their pooled prior (stats/arm_variation.hpp: robust_priors), so that several shapes whose arms
  // vary far more than the rest cannot hide one another. Read as false (the pooled prior) from
  // documents written before it.
  bool prior_conflict_median = true;
  // A shape found in that conflict, under the median reference, borrows the degrees of freedom of
  // the run's other such shapes but never a spread below its own (robust_priors: own_floor), so
  // that a shape known to vary much is not narrowed by a peer that varies less. Read as false
  // (the peers' spread, however narrow) from documents written before it.
  bool prior_conflict_own_floor = true;
  // An arm of a variant with three or more arms whose median lies beyond this many robust
  // standard deviations of the shape's arms, and beyond half the band, from its variant's other
  // arms is left out of the estimate as disturbed, and the report names it
  // (stats/arm_variation.hpp: outlier_arms; docs/statistics.md#disturbed-arms). 0: never, as
  // documents written before it read.
  double outlier_arm_sigmas = 5;
  // Each arm's median is the mid-distribution median of its samples (stats/tick_ties.hpp), which
  // reads between the ticks of the timer where samples tie on them; false takes the plain
  // median, which moves in whole ticks. Read as false from documents written before it.
  bool spread_ties = true;
  bool operator==(const StatsOptions&) const = default;
};

// Rejects values that would make the statistics meaningless, naming the option and the fix.
void validate(const StatsOptions& o);

// The "decision" object of plan.json's schedule and the "stats" object of report.json and
// compare.json. A document written before clock normalization existed reads as false, one
// written before the decisive factor, the prior-conflict level or the outlier-arm threshold as 0.
json to_json(const StatsOptions& o);
StatsOptions stats_options_from_json(const json& j, const std::string& where);

}  // namespace abh
