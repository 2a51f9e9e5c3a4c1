// Timers measure iterations; they are a measurement policy chosen by name. The kernel timing
// (model/timing.hpp) has "steady" (host clock, CPU plugins), "cupti" (CUPTI Activity kernel time,
// the default on a GPU) and "events" (CUDA events, only when asked for); the graph timing has
// "graph" (CUPTI records of replayed CUDA graphs, gpu/graph_timer.cpp), the launch timing "launch"
// (host clock from the launch call until the GPU is done, gpu/launch_timer.cpp). A timer that
// cannot work throws: there is no fallback to another timer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace abh::worker {

class Problem;

struct TimerContext {
  void* stream = nullptr;  // cudaStream_t for GPU timers
  int device = -1;         // CUDA device ordinal, -1 on CPU
  // The graph timer's: the problem it captures (its buffer sets and, for a plugin that captures
  // its own graphs, its capture and replay), and how many buffer sets its iterations cycle
  // through (1: the problem's only inputs, a warm L2).
  Problem* problem = nullptr;
  int buffer_sets = 1;
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
  // For a timer that times several samples in one window between hooks.before(w) and
  // hooks.after(w) (the graph timer: one replay, many iterations), and so may return more
  // samples than asked for: the window of each sample of the last measure(). Empty: sample i was
  // timed alone, between hooks.before(i) and hooks.after(i).
  virtual std::vector<int> sample_windows() const { return {}; }
  // The tick its readings move in, for a timer that reads the host's clock alone (the steady
  // timer: measured when it is made, stats/tick_ties.hpp: clock_tick_ns); 0 when unknown or when
  // a sample clock (the GPU's) says it.
  virtual double tick_ns() const { return 0; }
};

using TimerFactory = std::function<std::unique_ptr<Timer>(const TimerContext&)>;

// Registration happens at static-init time in each timer's file.
bool register_timer(const std::string& name, TimerFactory factory);
std::unique_ptr<Timer> make_timer(const std::string& name, const TimerContext& ctx);
std::vector<std::string> timer_names();

}  // namespace abh::worker
