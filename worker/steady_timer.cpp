// Host steady clock, for CPU plugins whose enqueue runs synchronously.
#include <chrono>

#include "timer.hpp"

namespace abh::worker {
namespace {

class SteadyTimer final : public Timer {
 public:
  std::string name() const override { return "steady"; }
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
};

const bool steady_timer_registered =
    register_timer("steady", [](const TimerContext&) { return std::make_unique<SteadyTimer>(); });

}  // namespace
}  // namespace abh::worker
