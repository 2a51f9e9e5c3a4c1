#include "model/stats_options.hpp"

#include "system/error.hpp"

namespace abh {

void validate(const StatsOptions& o) {
  if (!(o.noise_band >= 0 && o.noise_band < 0.5))
    throw UsageError("noise band " + std::to_string(o.noise_band) +
                     " is out of range: give a fraction in [0, 0.5), e.g. 0.01 for 1%");
  if (!(o.confidence > 0.5 && o.confidence < 1))
    throw UsageError("confidence " + std::to_string(o.confidence) +
                     " is out of range: give a level in (0.5, 1), e.g. 0.95");
  // Each tail of the percentile interval needs a handful of replicates beyond it, or the interval
  // edges are just the most extreme replicates.
  double tail = o.resamples * (1 - o.confidence) / 2;
  if (o.resamples < 100 || tail < 2.5)
    throw UsageError("bootstrap resamples " + std::to_string(o.resamples) +
                     " are too few for confidence " + std::to_string(o.confidence) +
                     ": use at least 100 and enough that (1 - confidence) / 2 * resamples >= 2.5");
}

json to_json(const StatsOptions& o) {
  return json{{"noise_band", o.noise_band},
              {"confidence", o.confidence},
              {"resamples", o.resamples},
              {"seed", o.seed},
              {"clock_normalize", o.clock_normalize}};
}

StatsOptions stats_options_from_json(const json& j, const std::string& w) {
  StatsOptions o;
  o.noise_band = field<double>(j, "noise_band", w);
  o.confidence = field<double>(j, "confidence", w);
  o.resamples = field<int>(j, "resamples", w);
  o.seed = field<std::uint64_t>(j, "seed", w);
  o.clock_normalize = j.contains("clock_normalize") ? field<bool>(j, "clock_normalize", w) : false;
  return o;
}

}  // namespace abh
