// GPU selection, environment probe and the per-arm CUDA session (stream + L2 flush).
#include "gpu/gpu_session.hpp"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "gpu/cuda_check.hpp"
#include "gpu/cuda_owner.hpp"
#include "gpu/l2_flush.hpp"
#include "gpu/nvml.hpp"

namespace abh::worker::gpu {
namespace {

std::string format_uuid(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

int device_count() {
  int n = 0;
  cuda_check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  return n;
}

// Resolves "0", "1", ... or a "GPU-..." UUID (as nvidia-smi -L prints it) to a CUDA ordinal. A
// UUID is the stable choice: ordinals move with CUDA_VISIBLE_DEVICES, UUIDs do not.
int resolve_device(const std::string& selector) {
  const int n = device_count();
  if (!selector.empty() && std::all_of(selector.begin(), selector.end(),
                                       [](unsigned char c) { return std::isdigit(c) != 0; })) {
    int idx = std::stoi(selector);
    if (idx >= n)
      throw UsageError("GPU index " + selector + " does not exist: this process sees " +
                       std::to_string(n) + " CUDA device(s) (check CUDA_VISIBLE_DEVICES)");
    return idx;
  }
  if (selector.rfind("GPU-", 0) != 0)
    throw UsageError("GPU selector '" + selector +
                     "' is neither an index (0, 1, ...) nor a UUID 'GPU-...' (see nvidia-smi -L)");
  std::string seen;
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    cuda_check(cudaGetDeviceProperties(&p, i),
               "cudaGetDeviceProperties(" + std::to_string(i) + ")");
    std::string u = format_uuid(p.uuid);
    if (u == selector) return i;
    seen += (seen.empty() ? "" : ", ") + u;
  }
  throw UsageError("no CUDA device has UUID " + selector + " (visible: " + seen +
                   "): the plan was made on another machine or CUDA_VISIBLE_DEVICES hides it");
}

std::int64_t flush_size_for(int device) {
  int l2 = 0;
  cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
             "cudaDeviceGetAttribute(L2CacheSize)");
  // Twice the L2, rounded up to 1 MiB, and never less than 16 MiB for a GPU that reports 0.
  std::int64_t bytes = std::max<std::int64_t>(2LL * l2, 16LL << 20);
  return (bytes + (1 << 20) - 1) / (1 << 20) * (1 << 20);
}

}  // namespace

bool cuda_available(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = "cudaGetDeviceCount: " + cuda_error_text(e);
    return false;
  }
  if (n == 0) {
    if (why) *why = "the CUDA driver reports no device";
    return false;
  }
  return true;
}

Environment probe(const std::string& selector) {
  Environment e = probe_host();
  const int dev = resolve_device(selector);
  cudaDeviceProp p{};
  cuda_check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  GpuInfo g;
  g.index = dev;
  g.name = p.name;
  g.uuid = format_uuid(p.uuid);
  char bus[64] = {};
  cuda_check(cudaDeviceGetPCIBusId(bus, sizeof bus, dev), "cudaDeviceGetPCIBusId");
  g.pci_bus_id = bus;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  g.sm_count = p.multiProcessorCount;
  g.l2_bytes = p.l2CacheSize;
  g.memory_bytes = static_cast<long long>(p.totalGlobalMem);
  e.gpu = g;

  int drv = 0, rt = 0;
  cuda_check(cudaDriverGetVersion(&drv), "cudaDriverGetVersion");
  cuda_check(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
  std::string why;
  std::string nv = nvml_driver_version(&why);
  // The NVML string names the exact driver build; without NVML the CUDA driver API version is
  // still exact enough to tell two machines apart, and the text says which one it is.
  e.driver_version = !nv.empty() ? nv + " (CUDA " + std::to_string(drv) + ")"
                                 : "CUDA driver API " + std::to_string(drv) + " (NVML unavailable)";
  e.cuda_runtime_version = std::to_string(rt);
  uint32_t cupti = 0;
  cupti_check(cuptiGetVersion(&cupti), "cuptiGetVersion");
  e.cupti_version = std::to_string(cupti);
  return e;
}

// Released in reverse order: the flush and its buffers, then the stream.
struct GpuSession::Impl {
  int device = -1;
  Stream stream;
  std::unique_ptr<L2Flush> flush;
};

GpuSession::GpuSession(const std::string& selector, L2FlushMethod flush)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = resolve_device(selector);
  cuda_check(cudaSetDevice(impl_->device), "cudaSetDevice(" + std::to_string(impl_->device) + ")");
  cuda_check(cudaFree(nullptr), "creating the CUDA context");
  // No persisting L2 carve-out: a plugin that asked for one would keep lines across the flush.
  cuda_check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0),
             "cudaDeviceSetLimit(PersistingL2CacheSize, 0)");
  impl_->stream = create_stream(cudaStreamNonBlocking);
  impl_->flush = std::make_unique<L2Flush>(flush, impl_->device, flush_size_for(impl_->device),
                                           impl_->stream.get());
}

GpuSession::~GpuSession() = default;

int GpuSession::device() const {
  return impl_->device;
}
void* GpuSession::stream() const {
  return impl_->stream.get();
}

void GpuSession::synchronize() {
  cuda_check(cudaStreamSynchronize(impl_->stream.get()), "cudaStreamSynchronize");
  cuda_check(cudaGetLastError(), "a previous asynchronous launch");
}

void GpuSession::flush_l2() {
  impl_->flush->run(impl_->stream.get());
}

std::int64_t GpuSession::flush_bytes() const {
  return impl_->flush->bytes();
}

L2FlushMethod GpuSession::flush_method() const {
  return impl_->flush->method();
}

double GpuSession::free_memory_bytes() const {
  size_t free = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return static_cast<double>(free);
}

}  // namespace abh::worker::gpu
