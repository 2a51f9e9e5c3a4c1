// The "events" timer: CUDA events recorded on the session stream around each iteration. Used only
// when asked for (--timer events); it includes launch gaps and any host-side work the plugin does
// between its launches, so on short kernels it reads higher than CUPTI (10-20 us on the H200).
// It times the session stream only: a plugin that launches on other streams must use "cupti".
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_owner.hpp"
#include "timer.hpp"

namespace abh::worker::gpu {
namespace {

class EventTimer final : public Timer {
 public:
  explicit EventTimer(const TimerContext& ctx) : stream_(static_cast<cudaStream_t>(ctx.stream)) {
    if (ctx.device < 0) throw Error("timer 'events' needs a CUDA device (no GPU session)");
  }

  std::string name() const override { return "events"; }

  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    if (count < 1) return {};
    const size_t n = static_cast<size_t>(count);
    std::vector<Event> start(n), stop(n);
    for (size_t i = 0; i < n; ++i) {
      start[i] = create_event();
      stop[i] = create_event();
    }
    for (size_t i = 0; i < n; ++i) {
      hooks.before(static_cast<int>(i));
      cuda_check(cudaEventRecord(start[i].get(), stream_), "cudaEventRecord(start)");
      iteration();
      cuda_check(cudaEventRecord(stop[i].get(), stream_), "cudaEventRecord(stop)");
      hooks.after(static_cast<int>(i));
    }
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    cuda_check(cudaGetLastError(), "a kernel launched in a timed iteration");
    std::vector<double> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, start[i].get(), stop[i].get()), "cudaEventElapsedTime");
      out.push_back(static_cast<double>(ms) * 1e6);
    }
    return out;
  }

 private:
  cudaStream_t stream_;
};

const bool event_timer_registered = register_timer(
    "events", [](const TimerContext& ctx) { return std::make_unique<EventTimer>(ctx); });

}  // namespace
}  // namespace abh::worker::gpu
