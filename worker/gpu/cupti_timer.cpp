// The "cupti" timer (the default of the kernel timing on a GPU): kernel time from CUPTI Activity
// records (gpu/cupti_activity.hpp).
//
// Each timed iteration runs in a CUPTI window of its own, so the records joined to it are exactly
// the kernels it launched (a split-K GEMM and its reduce kernel both count; an L2 flush outside the
// window does not). A sample is the sum of (end - start) over those kernels.
//
// The timer fails — it never falls back to another clock — on dropped records, on an iteration
// without kernels, on a record without timestamps, and when the kernels of one iteration differ
// from those of another in the same measure() call.
#include <algorithm>
#include <memory>

#include "gpu/cupti_activity.hpp"
#include "system/error.hpp"
#include "system/text.hpp"
#include "timer.hpp"

namespace abh::worker::gpu {
namespace {

// Runs `count` timed iterations, each in window base + i, with the hooks outside the window.
void run_iterations(uint64_t base, int count, const SampleHooks& hooks,
                    const std::function<void()>& iteration) {
  for (int i = 0; i < count; ++i) {
    hooks.before(i);
    Window window(base + static_cast<uint64_t>(i));
    trace_first_iteration();
    iteration();
    window.close();
    hooks.after(i);
  }
}

// One iteration's time: the sum of its kernels' durations. Sorts `ks` by start and appends
// their names, in that order, to `names`.
double iteration_ns(std::vector<const KernelRecord*>& ks, std::vector<std::string>& names) {
  std::sort(ks.begin(), ks.end(), [](const KernelRecord* a, const KernelRecord* b) {
    return a->span.start < b->span.start;
  });
  double ns = 0;
  for (const KernelRecord* k : ks) {
    if (k->span.start == 0 && k->span.end == 0)
      throw Error("CUPTI kernel record for " + k->span.name +
                  " has no timestamps (start = end = 0)");
    if (k->span.end < k->span.start)
      throw Error("CUPTI kernel record for " + k->span.name + " ends before it starts");
    ns += static_cast<double>(k->span.end - k->span.start);
    names.push_back(k->span.name);
  }
  return ns;
}

class CuptiTimer final : public Timer {
 public:
  explicit CuptiTimer(const TimerContext& ctx) {
    if (ctx.device < 0) throw Error("timer 'cupti' needs a CUDA device (no GPU session)");
    const std::string& err = enable_cupti_once();
    if (!err.empty()) throw Error("timer 'cupti' cannot start: " + err);
  }

  std::string name() const override { return "cupti"; }

  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    if (count < 1) return {};
    // Records of work done outside measure() (tactic warm-up launches, L2 flushes) carry no
    // window of this call and are ignored by the join below; no flush is needed up front,
    // which halves the fixed cost of a call (a forced flush costs ~0.5 ms).
    const uint64_t base = reserve_window_ids(count);
    run_iterations(base, count, hooks, iteration);
    const Drained d = drain();
    auto per = kernels_by_window(d, base, count);
    return sample_times(per);
  }

  std::vector<std::string> kernel_names() const override { return names_; }

 private:
  // One sample per iteration; every iteration must have run kernels, and the same set of them.
  std::vector<double> sample_times(std::vector<std::vector<const KernelRecord*>>& per) {
    std::vector<double> out;
    out.reserve(per.size());
    std::vector<std::string> first_sorted;
    for (size_t i = 0; i < per.size(); ++i) {
      auto& ks = per[i];
      if (ks.empty())
        throw Error("CUPTI saw no kernel in timed iteration " + std::to_string(i) + " of " +
                    std::to_string(per.size()) +
                    ": the plugin launched nothing, launched on another device, or its launches "
                    "were not recorded — refusing to report a time");
      std::vector<std::string> names;
      const double ns = iteration_ns(ks, names);
      std::vector<std::string> sorted = names;
      std::sort(sorted.begin(), sorted.end());
      if (i == 0) {
        first_sorted = sorted;
        names_ = names;
      } else if (sorted != first_sorted) {
        throw Error("the kernels of timed iteration " + std::to_string(i) + " [" +
                    join(names, ", ") + "] differ from those of iteration 0 [" +
                    join(names_, ", ") +
                    "]: the plugin changed its tactic mid-measurement; samples would mix kernels");
      }
      out.push_back(ns);
    }
    return out;
  }

  std::vector<std::string> names_;  // the kernels of one iteration of the last measure() call
};

const bool cupti_timer_registered = register_timer(
    "cupti", [](const TimerContext& ctx) { return std::make_unique<CuptiTimer>(ctx); });

}  // namespace
}  // namespace abh::worker::gpu
