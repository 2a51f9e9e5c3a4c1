// The clock of each sample when a timer times several samples in one window (the graph timer:
// every iteration of a replay ran between the replay's two clock stamps).
#include <string>

#include "sampling.hpp"
#include "system/error.hpp"

namespace abh::worker {

std::vector<ClockReading> clock_per_sample(const SampleClock& clock, const Timer& timer,
                                           std::size_t samples) {
  const std::vector<int> windows = timer.sample_windows();
  if (windows.empty()) return clock.read(static_cast<int>(samples));
  if (windows.size() != samples)
    throw Error("timer " + timer.name() + " gave " + std::to_string(samples) + " samples but " +
                std::to_string(windows.size()) + " sample windows");
  int count = 0;
  for (int w : windows) {
    if (w < 0 || w < count - 1 || w > count)
      throw Error("timer " + timer.name() + " gave sample windows out of order");
    count = w + 1;
  }
  const std::vector<ClockReading> per_window = clock.read(count);
  std::vector<ClockReading> out;
  out.reserve(samples);
  for (int w : windows) out.push_back(per_window[static_cast<std::size_t>(w)]);
  return out;
}

}  // namespace abh::worker
