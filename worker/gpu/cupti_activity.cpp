#include "gpu/cupti_activity.hpp"

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "gpu/cuda_check.hpp"
#include "model/worker_protocol.hpp"

namespace abh::worker::gpu {
namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kBufferAlign = 8;
constexpr CUpti_ExternalCorrelationKind kExtKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

// Filled by CUPTI's buffer-completed callback (which may run on a CUPTI thread), taken by drain()
// after a forced flush.
struct Collected {
  std::mutex mutex;
  Drained records;
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

// The record is packed: each field is copied out rather than referenced.
KernelRecord kernel_record(const CUpti_Activity* rec) {
  const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
  KernelRecord kr;
  std::memcpy(&kr.correlation, &k->correlationId, sizeof kr.correlation);
  std::memcpy(&kr.span.start, &k->start, sizeof kr.span.start);
  std::memcpy(&kr.span.end, &k->end, sizeof kr.span.end);
  std::memcpy(&kr.span.graph_id, &k->graphId, sizeof kr.span.graph_id);
  std::memcpy(&kr.span.graph_node_id, &k->graphNodeId, sizeof kr.span.graph_node_id);
  const char* name = nullptr;
  std::memcpy(&name, &k->name, sizeof name);
  kr.span.name = name ? name : "<unnamed kernel>";
  return kr;
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
      c.records.error = "cuptiActivityGetNextRecord: " + cupti_error_text(r);
      break;
    }
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      c.records.kernels.push_back(kernel_record(rec));
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      CUpti_ExternalCorrelationKind kind{};
      uint64_t id = 0;
      uint32_t corr = 0;
      std::memcpy(&kind, &e->externalKind, sizeof kind);
      std::memcpy(&id, &e->externalId, sizeof id);
      std::memcpy(&corr, &e->correlationId, sizeof corr);
      if (kind == kExtKind) c.records.external[corr] = id;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
    c.records.dropped += dropped;
}

std::atomic<uint64_t> g_next_id{1};

}  // namespace

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

std::uint64_t reserve_window_ids(int count) {
  return g_next_id.fetch_add(static_cast<uint64_t>(count));
}

Window::Window(std::uint64_t id) : id_(id) {
  cupti_check(cuptiActivityPushExternalCorrelationId(kExtKind, id),
              "cuptiActivityPushExternalCorrelationId");
}

Window::~Window() {
  if (!open_) return;
  uint64_t popped = 0;
  cuptiActivityPopExternalCorrelationId(kExtKind, &popped);
}

void Window::close() {
  open_ = false;
  uint64_t popped = 0;
  cupti_check(cuptiActivityPopExternalCorrelationId(kExtKind, &popped),
              "cuptiActivityPopExternalCorrelationId");
  if (popped != id_)
    throw Error("CUPTI external correlation stack out of order: pushed " + std::to_string(id_) +
                ", popped " + std::to_string(popped) +
                " (the plugin pushed an id of its own and did not pop it)");
}

Drained drain() {
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize before reading CUPTI records");
  // FlushAll does not wait for the GPU (hence the synchronize); FORCED also flushes buffers that
  // are not full yet.
  cupti_check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  Collected& c = collected();
  Drained d;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    std::swap(d, c.records);
  }
  if (!d.error.empty()) throw Error("CUPTI: " + d.error);
  if (d.dropped)
    throw Error("CUPTI dropped " + std::to_string(d.dropped) +
                " activity records: the samples are incomplete, so none is reported");
  return d;
}

std::vector<std::vector<const KernelRecord*>> kernels_by_window(const Drained& d,
                                                                std::uint64_t base, int count) {
  std::vector<std::vector<const KernelRecord*>> per(static_cast<size_t>(count));
  for (const auto& k : d.kernels) {
    auto it = d.external.find(k.correlation);
    if (it == d.external.end() || it->second < base ||
        it->second >= base + static_cast<uint64_t>(count))
      continue;  // an L2 flush, a clock stamp or other work outside the windows
    per[it->second - base].push_back(&k);
  }
  return per;
}

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

}  // namespace abh::worker::gpu
