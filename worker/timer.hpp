// Timers measure iterations; they are a measurement policy chosen by name: "steady" (host clock,
// CPU plugins), "cupti" (CUPTI Activity kernel time, the default on a GPU) and "events" (CUDA
// events, only when asked for). A timer that cannot work throws: there is no fallback to another
// timer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace abh::worker {

struct TimerContext {
  void* stream = nullptr;  // cudaStream_t for GPU timers
  int device = -1;         // CUDA device ordinal, -1 on CPU
};

// Work done around each sample, outside its timed window: `before(i)` right before sample i (an
// L2 flush, the opening clock probe), `after(i)` right after it (the closing clock probe).
struct SampleHooks {
  std::function<void(int)> before = [](int) {};
  std::function<void(int)> after = [](int) {};
};

class Timer {
 public:
  virtual ~Timer() = default;
  virtual std::string name() const = 0;
  // Runs `count` samples: hooks.before(i), `iteration()` inside the timed window, hooks.after(i).
  // Returns one duration in nanoseconds per sample; GPU timers return with the device idle.
  virtual std::vector<double> measure(int count, const SampleHooks& hooks,
                                      const std::function<void()>& iteration) = 0;
  // Kernel names seen in each timed iteration (GPU timers that can see them; empty otherwise).
  virtual std::vector<std::string> kernel_names() const { return {}; }
};

using TimerFactory = std::function<std::unique_ptr<Timer>(const TimerContext&)>;

// Registration happens at static-init time in each timer's file.
bool register_timer(const std::string& name, TimerFactory factory);
std::unique_ptr<Timer> make_timer(const std::string& name, const TimerContext& ctx);
std::vector<std::string> timer_names();

}  // namespace abh::worker
