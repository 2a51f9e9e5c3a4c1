// CUDA fp32 GEMM example plugin. Parameters: {"m","n","k"} (positive integers), optional "seed".
// Verification copies C back and compares up to 64 rows spread over the output with an fp64 host
// reference; each element's error is normalised by sum_p |a_ip * b_pj| (the bound of fp32
// accumulation error); tolerance 1e-4.
//
// Plugin ABI 2 (include/abharness/plugin.h): one kernel launch on the given stream, nothing else,
// so an iteration can be captured into a CUDA graph; and buffer sets — copies of A and B with a C
// of their own — which the worker cycles through for a cold L2 without flushing it.
#include <abharness/plugin_cuda.hpp>
#include <abharness/plugin_support.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_kernel.cuh"

namespace {

using DeviceBuffer = abh_plugin::cuda::DeviceBuffer<float>;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

DeviceBuffer device_floats(std::size_t count) {
  DeviceBuffer d;
  check(abh_plugin::cuda::device_alloc(d, count * sizeof(float)), "cudaMalloc");
  return d;
}

DeviceBuffer upload(const std::vector<float>& host) {
  DeviceBuffer d = device_floats(host.size());
  check(cudaMemcpy(d.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy to device");
  return d;
}

using abh_plugin::say;

}  // namespace

// The operands one iteration reads and writes.
struct Operands {
  DeviceBuffer da, db, dc;
};

struct abh_problem {
  int m = 0, n = 0, k = 0;
  std::vector<float> a, b;     // host copies, for the reference
  Operands cur;                // the current buffer set
  std::vector<Operands> sets;  // the others (sets[set] is empty while it is current)
  int set = 0;
};

namespace {

int create(const char* params_json, abh_problem** out, char* err, size_t err_len) {
  try {
    const abh_plugin::Params j(params_json);
    j.only({"m", "n", "k", "seed"});
    auto p = std::make_unique<abh_problem>();
    p->m = static_cast<int>(j.required_int("m", 1, 1 << 16));
    p->n = static_cast<int>(j.required_int("n", 1, 1 << 16));
    p->k = static_cast<int>(j.required_int("k", 1, 1 << 16));
    std::mt19937 rng(static_cast<unsigned>(j.optional_int("seed", 1, 0, UINT32_MAX)));
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    p->a.resize(size_t(p->m) * p->k);
    p->b.resize(size_t(p->k) * p->n);
    for (auto& x : p->a) x = dist(rng);
    for (auto& x : p->b) x = dist(rng);
    p->cur.da = upload(p->a);
    p->cur.db = upload(p->b);
    p->cur.dc = device_floats(size_t(p->m) * p->n);
    *out = p.release();
    return ABH_OK;
  } catch (const std::invalid_argument& e) {
    say(err, err_len, std::string("cuda-gemm: ") + e.what());
    return ABH_ERR_INVALID_PARAMS;
  } catch (const std::exception& e) {
    say(err, err_len, std::string("cuda-gemm: ") + e.what());
    return ABH_ERR_RUNTIME;
  }
}

int enqueue(abh_problem* p, void* stream, char* err, size_t len) {
  cudaError_t e = cuda_gemm::launch(p->cur.da.get(), p->cur.db.get(), p->cur.dc.get(), p->m, p->n,
                                    p->k, static_cast<cudaStream_t>(stream));
  if (e != cudaSuccess) {
    say(err, len, std::string("kernel launch: ") + cudaGetErrorString(e));
    return ABH_ERR_RUNTIME;
  }
  return ABH_OK;
}

int verify(abh_problem* p, abh_verify_result* out, char* err, size_t len) {
  std::vector<float> c(size_t(p->m) * p->n);
  cudaError_t e =
      cudaMemcpy(c.data(), p->cur.dc.get(), c.size() * sizeof(float), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    say(err, len, std::string("copy back: ") + cudaGetErrorString(e));
    return ABH_ERR_RUNTIME;
  }
  const int rows = std::min(p->m, 64);
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    const size_t i = rows == p->m ? r : size_t(r) * (p->m - 1) / std::max(rows - 1, 1);
    for (int j = 0; j < p->n; ++j) {
      double ref = 0, scale = 0;
      for (int q = 0; q < p->k; ++q) {
        double t = double(p->a[i * p->k + q]) * double(p->b[size_t(q) * p->n + j]);
        ref += t;
        scale += std::fabs(t);
      }
      double err_ij = std::fabs(double(c[i * p->n + j]) - ref) / std::max(scale, 1e-30);
      if (!(err_ij <= worst)) worst = err_ij;
    }
  }
  out->max_rel_error = worst;
  out->tolerance = 1e-4;
  out->checked = uint64_t(rows) * p->n;
  std::snprintf(out->method, sizeof out->method,
                "fp64 host reference on %d of %d rows, error / sum|a*b|", rows, p->m);
  return worst <= 1e-4 ? ABH_OK : ABH_ERR_WRONG_RESULT;
}

double flops(const abh_problem* p) {
  return 2.0 * p->m * double(p->n) * p->k;
}
double min_bytes(const abh_problem* p) {
  return 4.0 * (double(p->m) * p->k + double(p->k) * p->n + double(p->m) * p->n);
}
const char* tactic_of(const abh_problem*) {
  return cuda_gemm::kernel_name();
}
int library_versions(char* buf, size_t len) {
  int rt = 0;
  cudaRuntimeGetVersion(&rt);
  std::snprintf(buf, len, "{\"cudart\":\"%d\",\"cuda-gemm-kernel\":\"%s\"}", rt,
                cuda_gemm::kernel_name());
  return ABH_OK;
}

uint32_t capabilities(const abh_problem*) {
  return ABH_CAP_CAPTURABLE | ABH_CAP_BUFFER_SETS;
}

double buffer_set_bytes(const abh_problem* p) {
  return min_bytes(p);
}

// Sets 1.. copy set 0's A and B (so every set verifies against the same host reference).
int make_buffer_sets(abh_problem* p, int count, char* err, size_t len) {
  try {
    if (count < 1 || !p->sets.empty()) throw std::invalid_argument("once, with a count >= 1");
    p->sets.resize(size_t(count));
    for (size_t i = 1; i < p->sets.size(); ++i) {
      p->sets[i].da = upload(p->a);
      p->sets[i].db = upload(p->b);
      p->sets[i].dc = device_floats(size_t(p->m) * p->n);
    }
    return ABH_OK;
  } catch (const std::exception& e) {
    say(err, len, std::string("cuda-gemm: make_buffer_sets: ") + e.what());
    return ABH_ERR_RUNTIME;
  }
}

// Host work only: the current set's buffers swap places with set `index`'s.
int use_buffer_set(abh_problem* p, int index, char* err, size_t len) {
  if (index < 0 || index >= std::max(1, int(p->sets.size()))) {
    say(err, len, "cuda-gemm: use_buffer_set(" + std::to_string(index) + "): no such set");
    return ABH_ERR_INVALID_PARAMS;
  }
  if (index != p->set) {
    std::swap(p->sets[size_t(p->set)], p->cur);
    std::swap(p->sets[size_t(index)], p->cur);
    p->set = index;
  }
  return ABH_OK;
}

}  // namespace

ABH_PLUGIN_DEFINE_ONE_TACTIC_V2("cuda-gemm", ABH_DEVICE_CUDA, tactic_of)
