// A memory-bound CUDA plugin of known traffic: one kernel that copies `bytes` from one buffer to
// another (16-byte loads and stores, grid-stride), reading and writing each byte once. It is what
// the L2 flush methods are compared on (bench/cold_clean.sh): a copy larger than the L2 pays every
// miss it takes, and any dirty line a flush leaves behind costs it a write-back. Not a benchmark
// of anything else.
//
// Parameters: {"bytes": N}, a multiple of 16 in [4096, 8 GiB].
// verify: every 16-byte word of the destination equals the source's (compared on the GPU; the
// destination is poisoned at creation, so a word no iteration wrote fails).
#include <cuda_runtime_api.h>
#include <abharness/plugin_cuda.hpp>
#include <abharness/plugin_support.hpp>

#include <cstdio>
#include <memory>
#include <string>

struct abh_problem {
  std::size_t bytes = 0;
  int blocks = 0;
  abh_plugin::cuda::DeviceBuffer<uint4> src, dst;
  abh_plugin::cuda::DeviceBuffer<unsigned long long> mismatches;
};

namespace {

constexpr int kThreads = 256;

__host__ __device__ inline uint4 word_at(std::size_t i) {
  const auto h = static_cast<unsigned>((i * 2654435761ull) >> 7);
  return make_uint4(h, h ^ 0x9e3779b9u, h + 1u, ~h);
}

__global__ void __launch_bounds__(kThreads) fill_kernel(uint4* w, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    w[i] = word_at(i);
}

__global__ void __launch_bounds__(kThreads)
    copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void __launch_bounds__(kThreads)
    compare_kernel(const uint4* __restrict__ dst, std::size_t n, unsigned long long* mismatches) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 got = dst[i], want = word_at(i);
    bad += got.x != want.x || got.y != want.y || got.z != want.z || got.w != want.w;
  }
  if (bad) atomicAdd(mismatches, bad);
}

int cuda_fail(cudaError_t e, const char* what, char* err, size_t len) {
  abh_plugin::say(err, len, std::string("copy: ") + what + ": " + abh_plugin::cuda::error_text(e));
  return ABH_ERR_RUNTIME;
}

// The parameters: {"bytes": N}; false with a message for anything else.
bool read_params(const char* params_json, abh_problem& p, char* err, size_t len) {
  try {
    const abh_plugin::Params j(params_json);
    j.only({"bytes"});
    const long long b = j.required_int("bytes", 4096, 8LL << 30);
    if (b % 16 != 0) j.fail("bytes", "must be a multiple of 16, got " + std::to_string(b));
    p.bytes = static_cast<std::size_t>(b);
    return true;
  } catch (const std::exception& e) {
    abh_plugin::say(err, len, std::string("copy: bad params: ") + e.what());
    return false;
  }
}

int create(const char* params_json, abh_problem** out, char* err, size_t len) {
  auto p = std::make_unique<abh_problem>();
  if (!read_params(params_json, *p, err, len)) return ABH_ERR_INVALID_PARAMS;
  int dev = 0, sms = 0;
  if (auto e = cudaGetDevice(&dev); e != cudaSuccess)
    return cuda_fail(e, "cudaGetDevice", err, len);
  if (auto e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev); e != cudaSuccess)
    return cuda_fail(e, "cudaDeviceGetAttribute", err, len);
  p->blocks = sms * 8;  // 2048 threads per SM: every SM full
  if (auto e = abh_plugin::cuda::device_alloc(p->src, p->bytes); e != cudaSuccess)
    return cuda_fail(e, "cudaMalloc(src)", err, len);
  if (auto e = abh_plugin::cuda::device_alloc(p->dst, p->bytes); e != cudaSuccess)
    return cuda_fail(e, "cudaMalloc(dst)", err, len);
  if (auto e = abh_plugin::cuda::device_alloc(p->mismatches, sizeof(unsigned long long));
      e != cudaSuccess)
    return cuda_fail(e, "cudaMalloc(mismatches)", err, len);
  fill_kernel<<<p->blocks, kThreads>>>(p->src.get(), p->bytes / 16);
  if (auto e = cudaMemset(p->dst.get(), 0xff, p->bytes); e != cudaSuccess)
    return cuda_fail(e, "poisoning dst", err, len);
  if (auto e = cudaDeviceSynchronize(); e != cudaSuccess) return cuda_fail(e, "fill", err, len);
  *out = p.release();
  return ABH_OK;
}

int enqueue(abh_problem* p, void* stream, char* err, size_t len) {
  copy_kernel<<<p->blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      p->src.get(), p->dst.get(), p->bytes / 16);
  if (auto e = cudaGetLastError(); e != cudaSuccess) return cuda_fail(e, "kernel launch", err, len);
  return ABH_OK;
}

int verify(abh_problem* p, abh_verify_result* r, char* err, size_t len) {
  unsigned long long bad = 0;
  if (auto e = cudaMemset(p->mismatches.get(), 0, sizeof bad); e != cudaSuccess)
    return cuda_fail(e, "cudaMemset(mismatches)", err, len);
  compare_kernel<<<p->blocks, kThreads>>>(p->dst.get(), p->bytes / 16, p->mismatches.get());
  if (auto e = cudaMemcpy(&bad, p->mismatches.get(), sizeof bad, cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return cuda_fail(e, "compare", err, len);
  r->checked = p->bytes / 16;
  r->max_rel_error = static_cast<double>(bad) / static_cast<double>(r->checked);
  r->tolerance = 0;
  std::snprintf(r->method, sizeof r->method,
                "every 16-byte word of dst equals src's (GPU compare; %llu differ)", bad);
  return bad == 0 ? ABH_OK : ABH_ERR_WRONG_RESULT;
}

double flops(const abh_problem*) {
  return 0;
}
double min_bytes(const abh_problem* p) {
  return 2.0 * static_cast<double>(p->bytes);
}
const char* tactic_of(const abh_problem*) {
  return "copy-v1";
}
int library_versions(char* buf, size_t len) {
  int rt = 0;
  if (cudaRuntimeGetVersion(&rt) != cudaSuccess) return ABH_ERR_RUNTIME;
  std::snprintf(buf, len, "{\"copy-plugin\":\"1\",\"cudart\":\"%d\"}", rt);
  return ABH_OK;
}

}  // namespace

ABH_PLUGIN_DEFINE_ONE_TACTIC("copy", ABH_DEVICE_CUDA, tactic_of)
