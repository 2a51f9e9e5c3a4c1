#include "clock_guard.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "system/error.hpp"

namespace abh::worker {

bool clock_reading(unsigned long long open_ns, unsigned long long open_cycles,
                   unsigned long long close_ns, unsigned long long close_cycles,
                   double resolution_ns, ClockReading* out) {
  if (close_ns <= open_ns || close_cycles <= open_cycles) return false;
  const double ns = static_cast<double>(close_ns - open_ns);
  const double cycles = static_cast<double>(close_cycles - open_cycles);
  out->mhz = cycles / ns * 1e3;
  // The true interval is at least one tick shorter than the difference of two coarse readings
  // can suggest; a tick as long as the interval itself gives no upper bound at all.
  const double shortest = ns - std::max(resolution_ns, 0.0);
  out->mhz_high = shortest > 0 ? cycles / shortest * 1e3 : INFINITY;
  return true;
}

ClockGuard::ClockGuard(int peak_mhz, double floor_fraction) : peak_mhz_(std::max(peak_mhz, 0)) {
  if (peak_mhz > 0 && floor_fraction > 0)
    floor_mhz_ = static_cast<int>(std::lround(floor_fraction * peak_mhz));
}

std::vector<bool> ClockGuard::admit(const std::vector<ClockReading>& batch) {
  std::vector<bool> keep(batch.size(), true);
  for (size_t i = 0; i < batch.size(); ++i) {
    ++seen_;
    if (peak_mhz_ > 0 && batch[i].mhz > kAbovePeakFactor * peak_mhz_) {
      keep[i] = false;
      if (++above_peak_ > kAbovePeakTolerated + seen_ / 100)
        throw Error("the clock probe read " + std::to_string(std::lround(batch[i].mhz)) +
                    " MHz, above this GPU's " + std::to_string(peak_mhz_) + " MHz peak, for " +
                    std::to_string(above_peak_) + " of " + std::to_string(seen_) +
                    " samples: its stamps cannot be trusted on this GPU, so no clocks are "
                    "recorded for a comparison (please report it with `abharness doctor`)");
    } else if (enabled() && batch[i].mhz_high < floor_mhz_) {
      keep[i] = false;
      ++rejected_;
    }
  }
  return keep;
}

std::string above_peak_note(int above_peak, int peak_mhz) {
  if (above_peak <= 0) return "";
  return std::to_string(above_peak) + " sample" + (above_peak == 1 ? "" : "s") +
         " discarded: the clock probe read " + (above_peak == 1 ? "its" : "their") +
         " clock above the GPU's " + std::to_string(peak_mhz) +
         " MHz peak, so the GPU's timer stepped during " + (above_peak == 1 ? "it" : "them");
}

}  // namespace abh::worker
