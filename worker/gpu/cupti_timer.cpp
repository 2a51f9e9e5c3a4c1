// The "cupti" timer (the default on a GPU): kernel time from CUPTI Activity records.
//
// Each timed iteration runs between cuptiActivityPushExternalCorrelationId / Pop with an id of its
// own. CUPTI emits an EXTERNAL_CORRELATION record for every runtime and driver API call made while
// the id is pushed, mapping that call's correlationId to our id; each CONCURRENT_KERNEL record
// carries the correlationId of the call that launched it. Joining the two gives exactly the
// kernels of one iteration (a split-K GEMM and its reduce kernel both count; an L2 flush outside
// the window does not). A sample is the sum of (end - start) over those kernels.
//
// The timer fails — it never falls back to another clock — on dropped records, on an iteration
// without kernels, on a record without timestamps, and when the kernels of one iteration differ
// from those of another in the same measure() call.
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "gpu/cuda_check.hpp"
#include "model/worker_protocol.hpp"
#include "system/text.hpp"
#include "timer.hpp"

namespace abh::worker::gpu {
namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kBufferAlign = 8;
constexpr CUpti_ExternalCorrelationKind kExtKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

struct KernelRecord {
  uint32_t correlation = 0;
  uint64_t start = 0, end = 0;
  std::string name;
};

// Filled by CUPTI's buffer-completed callback (which may run on a CUPTI thread), drained by
// measure() after a forced flush.
struct Collected {
  std::mutex mutex;
  std::vector<KernelRecord> kernels;
  std::unordered_map<uint32_t, uint64_t> external;  // CUPTI correlationId -> our iteration id
  size_t dropped = 0;
  std::string error;
};

Collected& collected() {
  static Collected c;
  return c;
}

struct FreeBuffer {
  void operator()(uint8_t* p) const { std::free(p); }
};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t,
                               size_t valid) {
  std::unique_ptr<uint8_t, FreeBuffer> owned(buffer);  // CUPTI hands the buffer back to us
  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mutex);
  CUpti_Activity* rec = nullptr;
  for (;;) {
    CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &rec);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (r != CUPTI_SUCCESS) {
      c.error = "cuptiActivityGetNextRecord: " + cupti_error_text(r);
      break;
    }
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      KernelRecord kr;
      // The record is packed: copy each field out rather than binding references to it.
      std::memcpy(&kr.correlation, &k->correlationId, sizeof kr.correlation);
      std::memcpy(&kr.start, &k->start, sizeof kr.start);
      std::memcpy(&kr.end, &k->end, sizeof kr.end);
      const char* name = nullptr;
      std::memcpy(&name, &k->name, sizeof name);
      kr.name = name ? name : "<unnamed kernel>";
      c.kernels.push_back(std::move(kr));
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      CUpti_ExternalCorrelationKind kind{};
      uint64_t id = 0;
      uint32_t corr = 0;
      std::memcpy(&kind, &e->externalKind, sizeof kind);
      std::memcpy(&id, &e->externalId, sizeof id);
      std::memcpy(&corr, &e->correlationId, sizeof corr);
      if (kind == kExtKind) c.external[corr] = id;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
    c.dropped += dropped;
}

// CUPTI activity state is process-global: callbacks are registered and kinds enabled once per
// process (one worker process per arm keeps one CUPTI session per arm). Returns the error of the
// first attempt on every later call, so a broken setup cannot be half-used.
const std::string& enable_cupti_once() {
  static std::string error = [] {
    try {
      uint32_t runtime_version = 0;
      cupti_check(cuptiGetVersion(&runtime_version), "cuptiGetVersion");
      if (runtime_version < CUPTI_API_VERSION)
        throw Error("CUPTI library API version " + std::to_string(runtime_version) +
                    " is older than the headers this worker was built with (" +
                    std::to_string(CUPTI_API_VERSION) +
                    "): use the CUDA toolkit's libcupti or rebuild against the installed one");
      cupti_check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                  "cuptiActivityRegisterCallbacks");
      cupti_check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                  "cuptiActivityEnable(CONCURRENT_KERNEL)");
      cupti_check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION),
                  "cuptiActivityEnable(EXTERNAL_CORRELATION)");
      // Both API kinds: libraries such as cuBLASLt launch through the driver API, and the external
      // correlation records are emitted for API calls of the enabled kinds.
      cupti_check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "cuptiActivityEnable(RUNTIME)");
      cupti_check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), "cuptiActivityEnable(DRIVER)");
      return std::string();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }();
  return error;
}

std::atomic<uint64_t> g_next_id{1};

// ABH_STARTUP_TRACE=1 (worker_protocol.hpp) prints the steady-clock (CLOCK_MONOTONIC) time at which
// the process's first timed iteration is enqueued, so a test can measure start-up to first sample
// from outside.
void trace_first_iteration() {
  static bool done = false;
  if (done) return;
  done = true;
  if (const char* v = std::getenv(worker_protocol::kStartupTraceEnv);
      v && *v && std::string(v) != "0") {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch())
                        .count();
    std::fprintf(stderr, "abh-startup: first timed iteration at monotonic_ns=%lld\n",
                 static_cast<long long>(ns));
  }
}

struct Drained {
  std::vector<KernelRecord> kernels;
  std::unordered_map<uint32_t, uint64_t> external;
  size_t dropped = 0;
  std::string error;
};

Drained drain() {
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before reading CUPTI records");
  // FlushAll does not wait for the GPU (hence the synchronize); FORCED also flushes buffers that
  // are not full yet.
  cupti_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mutex);
  Drained d;
  d.kernels.swap(c.kernels);
  d.external.swap(c.external);
  std::swap(d.dropped, c.dropped);
  d.error.swap(c.error);
  return d;
}

// Runs `count` timed iterations, each between a push and a pop of its own external correlation
// id (base, base + 1, ...), with the hooks outside that window.
void run_iterations(uint64_t base, int count, const SampleHooks& hooks,
                    const std::function<void()>& iteration) {
  for (int i = 0; i < count; ++i) {
    hooks.before(i);
    const uint64_t id = base + static_cast<uint64_t>(i);
    cupti_check(cuptiActivityPushExternalCorrelationId(kExtKind, id),
                "cuptiActivityPushExternalCorrelationId");
    trace_first_iteration();
    iteration();
    uint64_t popped = 0;
    cupti_check(cuptiActivityPopExternalCorrelationId(kExtKind, &popped),
                "cuptiActivityPopExternalCorrelationId");
    if (popped != id)
      throw Error("CUPTI external correlation stack out of order: pushed " + std::to_string(id) +
                  ", popped " + std::to_string(popped) +
                  " (the plugin pushed an id of its own and did not pop it)");
    hooks.after(i);
  }
}

using IterationKernels = std::vector<std::vector<const KernelRecord*>>;

// The kernels of each timed iteration [base, base + count), joined through the external
// correlation records.
IterationKernels kernels_by_iteration(const Drained& d, uint64_t base, int count) {
  IterationKernels per(static_cast<size_t>(count));
  for (const auto& k : d.kernels) {
    auto it = d.external.find(k.correlation);
    if (it == d.external.end() || it->second < base ||
        it->second >= base + static_cast<uint64_t>(count))
      continue;  // an L2 flush or other work outside the timed iterations
    per[it->second - base].push_back(&k);
  }
  return per;
}

// One iteration's time: the sum of its kernels' durations. Sorts `ks` by start and appends
// their names, in that order, to `names`.
double iteration_ns(std::vector<const KernelRecord*>& ks, std::vector<std::string>& names) {
  std::sort(ks.begin(), ks.end(),
            [](const KernelRecord* a, const KernelRecord* b) { return a->start < b->start; });
  double ns = 0;
  for (const KernelRecord* k : ks) {
    if (k->start == 0 && k->end == 0)
      throw Error("CUPTI kernel record for " + k->name + " has no timestamps (start = end = 0)");
    if (k->end < k->start)
      throw Error("CUPTI kernel record for " + k->name + " ends before it starts");
    ns += static_cast<double>(k->end - k->start);
    names.push_back(k->name);
  }
  return ns;
}

class CuptiTimer final : public Timer {
 public:
  explicit CuptiTimer(const TimerContext& ctx) : ctx_(ctx) {
    if (ctx.device < 0) throw Error("timer 'cupti' needs a CUDA device (no GPU session)");
    const std::string& err = enable_cupti_once();
    if (!err.empty()) throw Error("timer 'cupti' cannot start: " + err);
  }

  std::string name() const override { return "cupti"; }

  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    if (count < 1) return {};
    // Records of work done outside measure() (tactic warm-up launches, L2 flushes) carry no
    // external id of this call and are ignored by the join below; no flush is needed up front,
    // which halves the fixed cost of a call (a forced flush costs ~0.5 ms).
    const uint64_t base = g_next_id.fetch_add(static_cast<uint64_t>(count));
    run_iterations(base, count, hooks, iteration);
    Drained d = drain();
    if (!d.error.empty()) throw Error("CUPTI: " + d.error);
    if (d.dropped)
      throw Error("CUPTI dropped " + std::to_string(d.dropped) +
                  " activity records: the samples are incomplete, so none is reported");
    IterationKernels per = kernels_by_iteration(d, base, count);
    return sample_times(per);
  }

  std::vector<std::string> kernel_names() const override { return names_; }

 private:
  // One sample per iteration; every iteration must have run kernels, and the same set of them.
  std::vector<double> sample_times(IterationKernels& per) {
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

  TimerContext ctx_;
  std::vector<std::string> names_;  // the kernels of one iteration of the last measure() call
};

const bool registered = register_timer(
    "cupti", [](const TimerContext& ctx) { return std::make_unique<CuptiTimer>(ctx); });

}  // namespace
}  // namespace abh::worker::gpu
