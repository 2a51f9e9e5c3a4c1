// How a GPU worker empties the L2 before each cold sample: a policy chosen by name, so that a bench
// can compare the methods on the same kernel (bench/cold_clean.sh) and every result says which one
// prepared its cache. Plain C++: the GPU side (worker/gpu/l2_flush.cpp) implements each method;
// this file names them, reads the bench's choice and writes the result's description.
//
// Why more than one: a flush that writes a buffer larger than the L2 (cudaMemsetAsync, as nvbench
// and triton.testing.do_bench do) evicts the kernel's data but leaves the L2 full of dirty lines of
// that buffer, and the timed kernel then pays their write-back to DRAM as its own misses evict
// them. Nsight Compute (--cache-control all) invalidates instead. The methods differ in what they
// leave behind: dirty lines (memset), clean lines of another buffer (read, memset-read), or
// invalidated lines (memset-discard).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace abh::worker {

enum class L2FlushMethod {
  memset,          // write a buffer of >= 2x the L2
  read,            // read a buffer of >= 2x the L2, written once when the session opened
  memset_read,     // memset one buffer, then read a second one
  memset_discard,  // memset a buffer, then discard its lines from the L2 (sm_80+)
};

struct L2FlushMethodInfo {
  L2FlushMethod method;
  std::string_view name;  // as ABH_L2_FLUSH and the result spell it
  std::string_view what;  // what it leaves in the L2, for messages and docs
};

// Every method, in the order messages list them.
const std::vector<L2FlushMethodInfo>& l2_flush_methods();
// The read pass, chosen by measurement on the H200 (docs/gpu.md, "Cold and clean").
L2FlushMethod default_l2_flush_method();
std::string_view l2_flush_method_name(L2FlushMethod m);
// The method `name` names; a UsageError naming `where` and every valid name otherwise.
L2FlushMethod parse_l2_flush_method(std::string_view name, std::string_view where);
// The method the environment asks for (worker_protocol::kL2FlushEnv), the default when it is unset
// or empty.
L2FlushMethod l2_flush_method_from_env();

// The result's measurement.cache_preparation for a sample prepared by `m` over buffers of `bytes`
// each: "flush-<method> <bytes> bytes".
std::string flush_cache_preparation(L2FlushMethod m, std::int64_t bytes);
// ... and for samples whose caches were left as they were (--warm-l2, and CPU plugins).
inline constexpr std::string_view kWarmCachePreparation = "warm";

}  // namespace abh::worker
