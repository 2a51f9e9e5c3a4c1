// The statistics options of a report (docs/statistics.md): the noise band, the confidence level
// and the bootstrap's size and seed, and whether GPU arms are compared at one SM clock. A plan
// records them for its adaptive rule (ScheduleOptions::decision), a report for its figures, so
// they are part of the model that both documents share; stats/statistics.hpp computes with them.
#pragma once

#include <cstdint>
#include <string>

#include "system/json_io.hpp"

namespace abh {

struct StatsOptions {
  double noise_band = 0.01;  // ratios within [1 - band, 1 + band] count as "no change"
  double confidence = 0.95;  // two-sided confidence level of the bootstrap intervals
  int resamples = 2000;      // bootstrap replicates per shape
  std::uint64_t seed = 1;    // fixed by default so that a report is reproducible
  // Compare GPU arms at one SM clock (clock_adjusted in stats/statistics.hpp) when every arm of a
  // shape recorded the clock of each sample; false compares the raw times.
  bool clock_normalize = true;
  bool operator==(const StatsOptions&) const = default;
};

// Rejects values that would make the statistics meaningless, naming the option and the fix.
void validate(const StatsOptions& o);

// The "decision" object of plan.json's schedule and the "stats" object of report.json and
// compare.json. A document written before clock normalization existed reads as false.
json to_json(const StatsOptions& o);
StatsOptions stats_options_from_json(const json& j, const std::string& where);

}  // namespace abh
