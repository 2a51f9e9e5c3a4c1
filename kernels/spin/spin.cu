// Known-behaviour CUDA plugin for testing the worker's GPU timers (not a benchmark kernel).
//
// mode "spin" (default): one kernel whose thread 0 of each block spins on %globaltimer until
//   `duration_us` have passed and writes the elapsed time it saw; the timers must read that
//   duration (within 1 % at 1 ms). verify: every block spun at least `duration_us`.
// mode "read": a memory-bound kernel that sums `bytes` of 32-bit words (grid-stride, 16-byte loads)
//   into one partial per block. A buffer that fits in L2 is faster warm than cold, which is how the
//   tests prove the L2 flush happens. verify: the sum equals the closed-form expectation, or the
//   value given in `expect_sum` (tests pass a wrong one to prove that a wrong output fails the
//   arm).
// "alternate_kernels": true (spin mode) launches a second, differently named kernel on every other
//   iteration, to prove that the CUPTI timer refuses a kernel set that changes between samples.
// "kernels": k (spin mode, default 1) launches k spin kernels back to back per iteration: an
//   iteration of several kernels, whose graph time includes the gaps between them.
//
// Plugin ABI 2: an iteration can be captured into a CUDA graph (unless "capturable": false), and
// the problem offers buffer sets (unless "buffer_sets": false). A set is a copy of what an
// iteration touches: in read mode the data it sums and its partials, in spin mode its output
// and a pad of "set_bytes" (default 16 MiB) that the spin never reads — its duration does not
// depend on the cache, so the sets exercise the rotation with a duration known in advance.
#include <cuda_runtime_api.h>
#include <abharness/plugin_cuda.hpp>
#include <abharness/plugin_support.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

// What one iteration touches: a buffer set (the current one is the problem's own).
struct SpinSet {
  abh_plugin::cuda::DeviceBuffer<unsigned long long> out;  // one value per block
  abh_plugin::cuda::DeviceBuffer<uint4> data;              // read mode: the words summed
  abh_plugin::cuda::DeviceBuffer<> pad;                    // spin mode: untouched bytes
};

struct abh_problem {
  std::string mode;
  double duration_us = 0;
  int blocks = 1;
  int kernels = 1;  // spin: kernels per iteration
  std::size_t bytes = 0;
  std::size_t pad_bytes = 16u << 20;
  bool alternate = false;  // spin: launch a differently named kernel every other iteration
  bool capturable = true;
  bool buffer_sets = true;
  unsigned long long launches = 0;
  bool has_expect = false;
  unsigned long long expect = 0;
  SpinSet cur;                // the current set
  std::vector<SpinSet> sets;  // the others (sets[set] is empty while it is current)
  int set = 0;
};

namespace {

constexpr int kReadThreads = 256;

__host__ __device__ inline unsigned word_value(std::size_t i) {
  return static_cast<unsigned>((i * 2654435761ull) >> 7) & 0xffffu;
}

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ inline void spin_for(unsigned long long ns, unsigned long long* out) {
  if (threadIdx.x != 0) return;
  const unsigned long long start = global_ns();
  unsigned long long now = start;
  while (now - start < ns) now = global_ns();
  out[blockIdx.x] = now - start;
}

__global__ void spin_kernel(unsigned long long ns, unsigned long long* out) {
  spin_for(ns, out);
}

// Same work, another name: lets a test prove that the CUPTI timer refuses samples whose kernel set
// changes between iterations (as a plugin switching tactics mid-measurement would cause).
__global__ void spin_kernel_alt(unsigned long long ns, unsigned long long* out) {
  spin_for(ns, out);
}

__global__ void fill_kernel(unsigned* w, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    w[i] = word_value(i);
}

__global__ void read_kernel(const uint4* __restrict__ v, std::size_t n4, unsigned long long* out) {
  unsigned long long s = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n4;
       i += std::size_t(gridDim.x) * blockDim.x) {
    uint4 x = v[i];
    s += static_cast<unsigned long long>(x.x) + x.y + x.z + x.w;
  }
  __shared__ unsigned long long part[kReadThreads];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int stride = kReadThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

void say(char* err, size_t len, const std::string& msg) {
  if (err && len) std::snprintf(err, len, "spin: %s", msg.c_str());
}

int cuda_fail(cudaError_t e, const char* what, char* err, size_t len) {
  say(err, len, std::string(what) + ": " + abh_plugin::cuda::error_text(e));
  return ABH_ERR_RUNTIME;
}

int create(const char* params_json, abh_problem** out, char* err, size_t err_len) {
  auto p = std::make_unique<abh_problem>();
  try {
    const abh_plugin::Params j(params_json);
    j.only({"mode", "duration_us", "blocks", "alternate_kernels", "kernels", "set_bytes", "bytes",
            "expect_sum", "capturable", "buffer_sets"});
    p->mode = j.optional_string("mode", "spin");
    if (p->mode == "spin") {
      p->duration_us = j.required_number("duration_us", 1e-9, 1e6);
      p->blocks = static_cast<int>(j.optional_int("blocks", 1, 1, 65535));
      p->alternate = j.optional_bool("alternate_kernels", false);
      p->kernels = static_cast<int>(j.optional_int("kernels", 1, 1, 64));
      p->pad_bytes = static_cast<std::size_t>(
          j.optional_int("set_bytes", static_cast<long long>(p->pad_bytes), 1, 8LL << 30));
    } else if (p->mode == "read") {
      const long long mb = j.required_int("bytes", 4096, 8LL << 30);
      if (mb % 16 != 0) j.fail("bytes", "must be a multiple of 16, got " + std::to_string(mb));
      p->bytes = static_cast<std::size_t>(mb);
      if (j.has("expect_sum")) {
        p->has_expect = true;
        p->expect = static_cast<unsigned long long>(j.required_int("expect_sum", 0));
      }
    } else {
      j.fail("mode", "must be \"spin\" or \"read\", got \"" + p->mode + "\"");
    }
    p->capturable = j.optional_bool("capturable", true);
    p->buffer_sets = j.optional_bool("buffer_sets", true);
  } catch (const std::exception& e) {
    say(err, err_len, std::string("bad params: ") + e.what());
    return ABH_ERR_INVALID_PARAMS;
  }
  if (p->mode == "read") {
    int dev = 0, sms = 0;
    if (auto e = cudaGetDevice(&dev); e != cudaSuccess)
      return cuda_fail(e, "cudaGetDevice", err, err_len);
    if (auto e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        e != cudaSuccess)
      return cuda_fail(e, "cudaDeviceGetAttribute", err, err_len);
    p->blocks = sms * 4;
    if (auto e = abh_plugin::cuda::device_alloc(p->cur.data, p->bytes); e != cudaSuccess)
      return cuda_fail(e, "cudaMalloc(data)", err, err_len);
    fill_kernel<<<1024, 256>>>(reinterpret_cast<unsigned*>(p->cur.data.get()), p->bytes / 4);
    if (auto e = cudaDeviceSynchronize(); e != cudaSuccess)
      return cuda_fail(e, "fill", err, err_len);
  }
  const std::size_t out_bytes = sizeof(unsigned long long) * static_cast<std::size_t>(p->blocks);
  if (auto e = abh_plugin::cuda::device_alloc(p->cur.out, out_bytes); e != cudaSuccess)
    return cuda_fail(e, "cudaMalloc(out)", err, err_len);
  if (auto e = cudaMemset(p->cur.out.get(), 0, out_bytes); e != cudaSuccess)
    return cuda_fail(e, "cudaMemset(out)", err, err_len);
  *out = p.release();
  return ABH_OK;
}

int enqueue(abh_problem* p, void* stream, char* err, size_t len) {
  auto s = static_cast<cudaStream_t>(stream);
  const auto ns = static_cast<unsigned long long>(p->duration_us * 1e3);
  if (p->mode == "spin" && p->alternate && (p->launches++ % 2))
    spin_kernel_alt<<<p->blocks, 32, 0, s>>>(ns, p->cur.out.get());
  else if (p->mode == "spin")
    for (int k = 0; k < p->kernels; ++k) spin_kernel<<<p->blocks, 32, 0, s>>>(ns, p->cur.out.get());
  else
    read_kernel<<<p->blocks, kReadThreads, 0, s>>>(p->cur.data.get(), p->bytes / 16,
                                                   p->cur.out.get());
  if (auto e = cudaGetLastError(); e != cudaSuccess) return cuda_fail(e, "kernel launch", err, len);
  return ABH_OK;
}

int verify(abh_problem* p, abh_verify_result* r, char* err, size_t len) {
  std::vector<unsigned long long> h(static_cast<size_t>(p->blocks));
  if (auto e =
          cudaMemcpy(h.data(), p->cur.out.get(), h.size() * sizeof h[0], cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return cuda_fail(e, "cudaMemcpy(out)", err, len);
  r->checked = h.size();
  if (p->mode == "spin") {
    const double want = p->duration_us * 1e3;
    double worst = 0;
    for (auto v : h) worst = std::max(worst, (want - static_cast<double>(v)) / want);
    r->max_rel_error = worst;  // > 0: a block stopped early
    r->tolerance = 0;
    std::snprintf(r->method, sizeof r->method, "each block spun >= %.1f us by %%globaltimer",
                  p->duration_us);
    return worst <= 0 ? ABH_OK : ABH_ERR_WRONG_RESULT;
  }
  unsigned long long got = 0;
  for (auto v : h) got += v;
  unsigned long long want = 0;
  if (p->has_expect) {
    want = p->expect;
  } else {
    for (std::size_t i = 0; i < p->bytes / 4; ++i) want += word_value(i);
  }
  r->max_rel_error = want ? std::abs(double(got) - double(want)) / double(want) : double(got != 0);
  r->tolerance = 0;
  std::snprintf(r->method, sizeof r->method, "exact integer sum of %zu words vs %s", p->bytes / 4,
                p->has_expect ? "params.expect_sum" : "closed-form host sum");
  return got == want ? ABH_OK : ABH_ERR_WRONG_RESULT;
}

double flops(const abh_problem*) {
  return 0;
}
double min_bytes(const abh_problem* p) {
  return p->mode == "read" ? double(p->bytes) : 0;
}
const char* tactic_of(const abh_problem* p) {
  return p->mode == "spin" ? "spin-v1" : "read-v1";
}
int library_versions(char* buf, size_t len) {
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  std::snprintf(buf, len, "{\"spin-plugin\":\"1\",\"cudart\":\"%d\"}", rt);
  return ABH_OK;
}

uint32_t capabilities(const abh_problem* p) {
  const uint32_t capturable = ABH_CAP_CAPTURABLE, sets = ABH_CAP_BUFFER_SETS;
  return (p->capturable ? capturable : 0u) | (p->buffer_sets ? sets : 0u);
}

std::size_t out_bytes(const abh_problem* p) {
  return sizeof(unsigned long long) * static_cast<std::size_t>(p->blocks);
}

double buffer_set_bytes(const abh_problem* p) {
  return double(out_bytes(p)) + double(p->mode == "read" ? p->bytes : p->pad_bytes);
}

// Set 0 is the problem's own; sets 1.. copy its data (read mode) or hold a pad (spin mode).
int make_buffer_sets(abh_problem* p, int count, char* err, size_t len) {
  if (count < 1 || !p->sets.empty()) {
    say(err, len, "make_buffer_sets: once, with a count >= 1");
    return ABH_ERR_INVALID_PARAMS;
  }
  p->sets.resize(static_cast<std::size_t>(count));
  for (std::size_t i = 1; i < p->sets.size(); ++i) {
    SpinSet& s = p->sets[i];
    if (auto e = abh_plugin::cuda::device_alloc(s.out, out_bytes(p)); e != cudaSuccess)
      return cuda_fail(e, "cudaMalloc(out of a buffer set)", err, len);
    if (auto e = cudaMemset(s.out.get(), 0, out_bytes(p)); e != cudaSuccess)
      return cuda_fail(e, "cudaMemset(out of a buffer set)", err, len);
    if (p->mode == "read") {
      if (auto e = abh_plugin::cuda::device_alloc(s.data, p->bytes); e != cudaSuccess)
        return cuda_fail(e, "cudaMalloc(data of a buffer set)", err, len);
      if (auto e = cudaMemcpy(s.data.get(), p->cur.data.get(), p->bytes, cudaMemcpyDeviceToDevice);
          e != cudaSuccess)
        return cuda_fail(e, "cudaMemcpy(data of a buffer set)", err, len);
    } else {
      if (auto e = abh_plugin::cuda::device_alloc(s.pad, p->pad_bytes); e != cudaSuccess)
        return cuda_fail(e, "cudaMalloc(pad of a buffer set)", err, len);
      if (auto e = cudaMemset(s.pad.get(), 0, p->pad_bytes); e != cudaSuccess)
        return cuda_fail(e, "cudaMemset(pad of a buffer set)", err, len);
    }
  }
  return ABH_OK;
}

// Host work only (it may run between the enqueues of a graph capture): swaps owners.
int use_buffer_set(abh_problem* p, int index, char* err, size_t len) {
  const int count = std::max<int>(1, static_cast<int>(p->sets.size()));
  if (index < 0 || index >= count) {
    say(err, len,
        "use_buffer_set(" + std::to_string(index) + "): " + std::to_string(count) + " set(s)");
    return ABH_ERR_INVALID_PARAMS;
  }
  if (index != p->set) {
    std::swap(p->sets[static_cast<std::size_t>(p->set)], p->cur);
    std::swap(p->sets[static_cast<std::size_t>(index)], p->cur);
    p->set = index;
  }
  return ABH_OK;
}

}  // namespace

ABH_PLUGIN_DEFINE_ONE_TACTIC_V2("spin", ABH_DEVICE_CUDA, tactic_of)
