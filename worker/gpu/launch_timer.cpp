// The "launch" timer, which times the launch timing (docs/method.md, "Three timings"): what an
// eager user pays per iteration — the host steady clock from just before the plugin's enqueue is
// called until the worker's stream has finished its work, so the launch call, the launcher's host
// work (for a Python plugin: the callback into Python, run(), Triton's or PyTorch's launcher) and
// the kernels' GPU time all count.
//
// The sample's preparation (the L2 flush or the next buffer set) and its opening clock stamp are
// enqueued by hooks.before and waited for before the clock starts, so neither is inside the
// window; the closing stamp is enqueued after it. It times the worker's stream: a plugin that
// launches on other streams joins them to it (as for the events timer).
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "timer.hpp"

namespace abh::worker::gpu {
namespace {

class LaunchTimer final : public Timer {
 public:
  explicit LaunchTimer(const TimerContext& ctx) : stream_(static_cast<cudaStream_t>(ctx.stream)) {
    if (ctx.device < 0) throw Error("timer 'launch' needs a CUDA device (no GPU session)");
  }

  std::string name() const override { return "launch"; }

  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    std::vector<double> out;
    out.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      hooks.before(i);
      cuda_check(cudaStreamSynchronize(stream_),
                 "cudaStreamSynchronize before a launch-timed iteration");
      const auto t0 = std::chrono::steady_clock::now();
      iteration();
      const cudaError_t e = cudaStreamSynchronize(stream_);
      const auto t1 = std::chrono::steady_clock::now();
      cuda_check(e, "cudaStreamSynchronize after a launch-timed iteration");
      hooks.after(i);
      out.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after the closing stamps");
    return out;
  }

 private:
  cudaStream_t stream_;
};

const bool launch_timer_registered = register_timer(
    "launch", [](const TimerContext& ctx) { return std::make_unique<LaunchTimer>(ctx); });

}  // namespace
}  // namespace abh::worker::gpu
