// The "graph" timer, which times the graph timing (docs/method.md, "Three timings"): what a
// serving engine that replays CUDA graphs pays per iteration.
//
// N iterations are captured into one CUDA graph, iteration i using buffer set i mod S (N is a
// multiple of S, so consecutive replays keep the rotation and no set is used twice in a row), and
// the graph is replayed in a CUPTI window of its own. The kernels CUPTI records inside the replay
// are cut into the N iterations (graph_cut.hpp): an iteration's time runs from its first kernel's
// start to its last kernel's end. Clock stamps and hooks go around each replay, so every iteration
// of a replay carries that replay's clock (sample_windows()).
//
// The graph is captured by the worker (cudaStreamBeginCapture in global mode) or, for a problem
// whose runtime must know of the capture (ABH_CAP_OWN_GRAPHS: PyTorch's caching allocator), by
// the plugin; it is captured again whenever the problem's tactic changed. The timer fails closed:
// on a problem that does not declare that it can be captured, on a capture that fails or (graphs
// the worker captures) ran a kernel outside the graph, on a graph or a replay that does not hold N
// times the kernels of one eager iteration, and on a replay whose kernels do not cut into N equal
// iterations.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_owner.hpp"
#include "gpu/cupti_activity.hpp"
#include "graph_cut.hpp"
#include "plugin.hpp"
#include "system/error.hpp"
#include "system/text.hpp"
#include "timer.hpp"

namespace abh::worker::gpu {
namespace {

// Iterations per replay before rounding up to a multiple of the buffer sets: enough that a
// replay's launch and its CUPTI window cost little per sample.
constexpr int kIterationsPerReplay = 64;

// Kernel nodes of a graph, those of child graphs included: what CUPTI must record per replay.
std::size_t kernel_nodes(cudaGraph_t graph) {
  std::size_t n = 0;
  cuda_check(cudaGraphGetNodes(graph, nullptr, &n), "cudaGraphGetNodes");
  std::vector<cudaGraphNode_t> nodes(n);
  cuda_check(cudaGraphGetNodes(graph, nodes.data(), &n), "cudaGraphGetNodes");
  std::size_t kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    cuda_check(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType");
    if (type == cudaGraphNodeTypeKernel) ++kernels;
    if (type == cudaGraphNodeTypeGraph) {
      cudaGraph_t child = nullptr;
      cuda_check(cudaGraphChildGraphNodeGetGraph(node, &child), "cudaGraphChildGraphNodeGetGraph");
      kernels += kernel_nodes(child);
    }
  }
  return kernels;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// No kernel may run during a capture: it would be one launched outside the captured stream.
void check_capture_ran_nothing(std::uint64_t window) {
  const Drained d = drain();
  for (const auto& ks : kernels_by_window(d, window, 1))
    if (!ks.empty())
      throw Error("kernel " + ks.front()->span.name +
                  " ran during the graph capture instead of being captured: the problem launches "
                  "work outside the stream it is given, so it cannot be timed as a graph");
}

class GraphTimer final : public Timer {
 public:
  explicit GraphTimer(const TimerContext& ctx)
      : stream_(static_cast<cudaStream_t>(ctx.stream)),
        problem_(ctx.problem),
        sets_(std::max(1, ctx.buffer_sets)) {
    if (ctx.device < 0) throw Error("timer 'graph' needs a CUDA device (no GPU session)");
    if (!problem_) throw Error("timer 'graph' needs the problem it captures");
    if (!problem_->has(ABH_CAP_CAPTURABLE))
      throw Error("the " + problem_->plugin() +
                  " plugin does not declare that its problem can be captured into a CUDA graph "
                  "(ABH_CAP_CAPTURABLE of plugin ABI 2; `capturable = True` in Python): the graph "
                  "timing is refused");
    own_graphs_ = problem_->has(ABH_CAP_OWN_GRAPHS);
    iterations_ = sets_ * ((kIterationsPerReplay + sets_ - 1) / sets_);
    const std::string& err = enable_cupti_once();
    if (!err.empty()) throw Error("timer 'graph' cannot start: " + err);
  }
  ~GraphTimer() override { release(); }

  std::string name() const override { return "graph"; }

  // Whole replays of N iterations: ceil(count / N) of them, N samples each.
  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    if (count < 1) return {};
    if (!captured_ || generation_ != problem_->tactic_generation()) capture(iteration);
    const int replays = (count + iterations_ - 1) / iterations_;
    const std::uint64_t base = reserve_window_ids(replays);
    for (int r = 0; r < replays; ++r) {
      hooks.before(r);
      Window window(base + static_cast<std::uint64_t>(r));
      trace_first_iteration();
      launch();
      window.close();
      hooks.after(r);
    }
    return cut(drain(), base, replays);
  }

  std::vector<std::string> kernel_names() const override { return names_; }
  std::vector<int> sample_windows() const override { return windows_; }

 private:
  // One eager iteration first, in a window of its own: lazy module loading, a JIT compiler's
  // first call and a library's first-use setup then happen before the capture, not inside it, and
  // its kernels are what every captured iteration must replay.
  void capture(const std::function<void()>& iteration) {
    release();
    per_iteration_ = eager_kernels(iteration);
    const std::uint64_t window = reserve_window_ids(1);
    Window w(window);
    if (own_graphs_) {
      own_ = problem_->capture_graph(stream_, iterations_, sets_);
      w.close();
    } else {
      StreamCapture cap(stream_);
      for (int i = 0; i < iterations_; ++i) {
        if (sets_ > 1) problem_->use_buffer_set(i % sets_);
        iteration();
      }
      Graph graph = cap.end();
      w.close();
      check_graph_size(kernel_nodes(graph.get()));
      exec_ = instantiate_graph(graph.get());
    }
    captured_ = true;
    generation_ = problem_->tactic_generation();
    // A graph the framework captured may run the framework's own set-up kernels while capturing
    // (PyTorch fills its random generator's state): those are not the problem's. Work of the
    // problem that escaped the capture shows in the replay instead, as missing kernels (cut()).
    if (!own_graphs_) check_capture_ran_nothing(window);
  }

  // The kernels one eager iteration launches (> 0).
  std::size_t eager_kernels(const std::function<void()>& iteration) {
    if (sets_ > 1) problem_->use_buffer_set(0);
    const std::uint64_t window = reserve_window_ids(1);
    Window w(window);
    iteration();
    w.close();
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize before the graph capture");
    const std::size_t k = kernels_by_window(drain(), window, 1).front().size();
    if (k == 0)
      throw Error(
          "CUPTI saw no kernel in an eager iteration before the graph capture: the "
          "problem launched nothing — refusing to time a graph");
    return k;
  }

  void check_graph_size(std::size_t nodes) const {
    if (nodes != per_iteration_ * static_cast<std::size_t>(iterations_))
      throw Error("the captured graph holds " + std::to_string(nodes) + " kernel nodes, but " +
                  std::to_string(iterations_) + " iterations launch " +
                  std::to_string(per_iteration_) +
                  " kernels each when run eagerly: the problem launches other kernels when "
                  "captured, or launches some outside the stream it is given");
  }

  void launch() {
    if (own_graphs_)
      problem_->replay_graph(own_, stream_);
    else
      cuda_check(cudaGraphLaunch(exec_.get(), stream_), "cudaGraphLaunch");
  }

  void release() noexcept {
    if (own_) problem_->destroy_graph(own_);
    own_ = nullptr;
    exec_.reset();
    captured_ = false;
  }

  std::vector<double> cut(const Drained& d, std::uint64_t base, int replays) {
    std::vector<double> out;
    windows_.clear();
    auto per = kernels_by_window(d, base, replays);
    for (int r = 0; r < replays; ++r) {
      const auto& records = per[static_cast<std::size_t>(r)];
      const std::size_t expected = per_iteration_ * static_cast<std::size_t>(iterations_);
      if (records.size() != expected)
        throw Error("CUPTI recorded " + std::to_string(records.size()) +
                    " kernels in a replay of " + std::to_string(iterations_) + " iterations of " +
                    std::to_string(per_iteration_) +
                    " kernels each (as one eager iteration launched): the records are incomplete, "
                    "or the problem's work escaped the capture — refusing to report a time");
      std::vector<KernelSpan> spans;
      spans.reserve(records.size());
      for (const KernelRecord* k : records) spans.push_back(k->span);
      IterationCut c = cut_iterations(std::move(spans), iterations_);
      // Replays of one graph run one set of kernels; the sampling loop checks across calls.
      if (r == 0)
        names_ = std::move(c.kernels);
      else if (sorted(c.kernels) != sorted(names_))
        throw Error("two replays of one graph ran different kernels ([" + join(names_, ", ") +
                    "], then [" + join(c.kernels, ", ") + "])");
      out.insert(out.end(), c.ns.begin(), c.ns.end());
      windows_.insert(windows_.end(), c.ns.size(), r);
    }
    return out;
  }

  cudaStream_t stream_;
  Problem* problem_;
  int sets_;
  int iterations_ = 0;
  bool own_graphs_ = false;
  bool captured_ = false;
  std::uint64_t generation_ = 0;
  GraphExec exec_;                 // a graph the worker captured
  void* own_ = nullptr;            // a graph the plugin captured (its handle)
  std::size_t per_iteration_ = 0;  // kernels of one eager iteration
  std::vector<std::string> names_;
  std::vector<int> windows_;
};

const bool graph_timer_registered = register_timer(
    "graph", [](const TimerContext& ctx) { return std::make_unique<GraphTimer>(ctx); });

}  // namespace
}  // namespace abh::worker::gpu
