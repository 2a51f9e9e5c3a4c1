#include "model/stats_options.hpp"

#include <cmath>

#include "system/error.hpp"

#include <cstdio>

namespace abh {

namespace {

// An option's value as the user would type it (0.7, not 0.700000).
std::string shortest(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

// A value that would be in range as a percentage (95 for 0.95) says so. It does not claim the
// user typed a bare number: `--noise-band 150%` arrives here as 1.5 too.
std::string percent_hint(double v, bool (*in_range)(double)) {
  return v >= 1 && in_range(v / 100)
             ? " (if " + shortest(v) + "% was meant: " + shortest(v / 100) + ")"
             : "";
}

bool band_in_range(double v) {
  return v >= 0 && v < 0.5;
}

// A number a plan can hold: JSON has no infinity, and a plan that said null could not be read.
bool decisive_in_range(double v) {
  return v == 0 || (v >= 1.1 && std::isfinite(v));
}

bool conflict_level_in_range(double v) {
  return v == 0 || (v >= 0.9 && v < 1);
}

bool confidence_in_range(double v) {
  return v > 0.5 && v < 1;
}

}  // namespace

void validate(const StatsOptions& o) {
  if (!band_in_range(o.noise_band))
    throw UsageError("--noise-band " + shortest(o.noise_band) + " (" +
                     shortest(o.noise_band * 100) +
                     "%) is out of range: give a fraction in [0, 0.5), e.g. 0.01 for 1%" +
                     percent_hint(o.noise_band, band_in_range));
  if (!confidence_in_range(o.confidence))
    throw UsageError("--confidence " + shortest(o.confidence) +
                     " is out of range: give a level in (0.5, 1), e.g. 0.95" +
                     percent_hint(o.confidence, confidence_in_range));
  if (!decisive_in_range(o.decisive_factor))
    throw UsageError("--decisive-factor " + shortest(o.decisive_factor) +
                     " is out of range: give 0 (every verdict on one candidate arm is confirmed) "
                     "or a factor of at least 1.1, e.g. 1.5");
  if (!conflict_level_in_range(o.prior_conflict_level))
    throw UsageError("--prior-conflict " + shortest(o.prior_conflict_level) +
                     " is out of range: give 0 (every shape borrows the other shapes' arm "
                     "variation) or a level in [0.9, 1), e.g. 0.999");
  if (o.outlier_arm_sigmas != 0 && !(o.outlier_arm_sigmas >= 3 && o.outlier_arm_sigmas <= 100))
    throw UsageError("--outlier-arms " + shortest(o.outlier_arm_sigmas) +
                     " is out of range: give 0 (no arm is ever left out) or a number of robust "
                     "standard deviations in [3, 100], e.g. 5");
  // Each tail of the percentile interval needs a handful of replicates beyond it, or the interval
  // edges are just the most extreme replicates.
  double tail = o.resamples * (1 - o.confidence) / 2;
  if (o.resamples < 100 || tail < 2.5)
    throw UsageError("--resamples " + std::to_string(o.resamples) +
                     " are too few for --confidence " + shortest(o.confidence) +
                     ": use at least 100 and enough that (1 - confidence) / 2 * resamples >= 2.5");
}

json to_json(const StatsOptions& o) {
  return json{{"noise_band", o.noise_band},
              {"confidence", o.confidence},
              {"resamples", o.resamples},
              {"seed", o.seed},
              {"clock_normalize", o.clock_normalize},
              {"decisive_factor", o.decisive_factor},
              {"prior_conflict_level", o.prior_conflict_level},
              {"prior_conflict_median", o.prior_conflict_median},
              {"prior_conflict_own_floor", o.prior_conflict_own_floor},
              {"outlier_arm_sigmas", o.outlier_arm_sigmas},
              {"spread_ties", o.spread_ties}};
}

StatsOptions stats_options_from_json(const json& j, const std::string& w) {
  StatsOptions o;
  o.noise_band = field<double>(j, "noise_band", w);
  o.confidence = field<double>(j, "confidence", w);
  o.resamples = field<int>(j, "resamples", w);
  o.seed = field<std::uint64_t>(j, "seed", w);
  o.clock_normalize = j.contains("clock_normalize") ? field<bool>(j, "clock_normalize", w) : false;
  o.decisive_factor = j.contains("decisive_factor") ? field<double>(j, "decisive_factor", w) : 0;
  o.prior_conflict_level =
      j.contains("prior_conflict_level") ? field<double>(j, "prior_conflict_level", w) : 0;
  o.prior_conflict_median =
      j.contains("prior_conflict_median") && field<bool>(j, "prior_conflict_median", w);
  o.prior_conflict_own_floor =
      j.contains("prior_conflict_own_floor") && field<bool>(j, "prior_conflict_own_floor", w);
  o.outlier_arm_sigmas =
      j.contains("outlier_arm_sigmas") ? field<double>(j, "outlier_arm_sigmas", w) : 0;
  o.spread_ties = j.contains("spread_ties") && field<bool>(j, "spread_ties", w);
  return o;
}

}  // namespace abh
