#include "clock_guard.hpp"

#include <algorithm>
#include <cmath>

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

ClockGuard::ClockGuard(int peak_mhz, double floor_fraction) {
  if (peak_mhz > 0 && floor_fraction > 0)
    floor_mhz_ = static_cast<int>(std::lround(floor_fraction * peak_mhz));
}

std::vector<bool> ClockGuard::admit(const std::vector<ClockReading>& batch) {
  std::vector<bool> keep(batch.size(), true);
  if (!enabled()) return keep;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].mhz_high < floor_mhz_) {
      keep[i] = false;
      ++rejected_;
    }
  }
  return keep;
}

}  // namespace abh::worker
