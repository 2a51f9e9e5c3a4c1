// Buffer sets of a cuBLASLt GEMM problem (plugin ABI 2): copies of A and B and a D of their own,
// so that the worker can cycle iterations through inputs that are not in the L2. The current set
// is always the one in p.a, p.b and p.d (the others wait in p.sets), so every other part of the
// plugin, the verification included, reads the current set without knowing there are several.
// The copies hold A's and B's values, so every set verifies against the same reference; each D
// is poisoned with NaN, as set 0's was, so an element no iteration wrote fails verification.
#include "problem.hpp"

namespace cublaslt_gemm {

double set_bytes(const abh_problem& p) {
  return double(p.m * p.k) * elem_bytes(p.ea) + double(p.n * p.k) * elem_bytes(p.eb) +
         2.0 * double(p.m * p.n);
}

void make_sets(abh_problem& p, int count) {
  if (count < 1 || !p.sets.empty())
    throw Failure(ABH_ERR_INVALID_PARAMS,
                  "make_buffer_sets(" + std::to_string(count) + "): once, with a count >= 1");
  const std::size_t a_bytes = std::size_t(p.m * p.k) * elem_bytes(p.ea);
  const std::size_t b_bytes = std::size_t(p.n * p.k) * elem_bytes(p.eb);
  p.sets.resize(static_cast<std::size_t>(count));  // sets[0] stays empty: set 0 is in p.a/b/d
  for (std::size_t i = 1; i < p.sets.size(); ++i) {
    BufferSet& s = p.sets[i];
    s.a = dev_alloc(a_bytes, "A of a buffer set");
    s.b = dev_alloc(b_bytes, "B of a buffer set");
    s.d = dev_alloc(std::size_t(p.m * p.n) * 2, "D of a buffer set");
    cuda_ok(cudaMemcpy(s.a.get(), p.a.get(), a_bytes, cudaMemcpyDeviceToDevice), "copy A");
    cuda_ok(cudaMemcpy(s.b.get(), p.b.get(), b_bytes, cudaMemcpyDeviceToDevice), "copy B");
    cuda_ok(fill_nan(static_cast<__nv_bfloat16*>(s.d.get()), p.m * p.n, nullptr), "poison D");
  }
  cuda_ok(cudaDeviceSynchronize(), "buffer sets");
}

void use_set(abh_problem& p, int index) {
  const int count = std::max<int>(1, static_cast<int>(p.sets.size()));
  if (index < 0 || index >= count)
    throw Failure(ABH_ERR_INVALID_PARAMS, "use_buffer_set(" + std::to_string(index) +
                                              "): the problem has " + std::to_string(count) +
                                              " set(s)");
  if (index == p.set) return;
  // Host work only (it may run between the enqueues of a graph capture): swap owners.
  BufferSet& out = p.sets[static_cast<std::size_t>(p.set)];
  std::swap(out.a, p.a);
  std::swap(out.b, p.b);
  std::swap(out.d, p.d);
  BufferSet& in = p.sets[static_cast<std::size_t>(index)];
  std::swap(in.a, p.a);
  std::swap(in.b, p.b);
  std::swap(in.d, p.d);
  p.set = index;
}

}  // namespace cublaslt_gemm
