// Host steady clock, for CPU plugins whose enqueue runs synchronously.
#include <chrono>
#include <vector>

#include "stats/tick_ties.hpp"
#include "timer.hpp"

namespace abh::worker {
namespace {

// The tick of the host's steady clock, from the gaps between 10,000 successive readings (about
// 0.3 ms).
double steady_clock_tick_ns() {
  std::vector<double> gaps;
  gaps.reserve(10000);
  auto before = std::chrono::steady_clock::now();
  for (int i = 0; i < 10000; ++i) {
    const auto now = std::chrono::steady_clock::now();
    gaps.push_back(std::chrono::duration<double, std::nano>(now - before).count());
    before = now;
  }
  return abh::clock_tick_ns(gaps);
}

class SteadyTimer final : public Timer {
 public:
  std::string name() const override { return "steady"; }
  double tick_ns() const override { return tick_ns_; }
  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    std::vector<double> out;
    out.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      hooks.before(i);
      auto t0 = std::chrono::steady_clock::now();
      iteration();
      auto t1 = std::chrono::steady_clock::now();
      hooks.after(i);
      out.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    return out;
  }

 private:
  double tick_ns_ = steady_clock_tick_ns();
};

const bool steady_timer_registered =
    register_timer("steady", [](const TimerContext&) { return std::make_unique<SteadyTimer>(); });

}  // namespace
}  // namespace abh::worker
