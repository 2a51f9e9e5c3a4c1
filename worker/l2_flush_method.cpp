#include "l2_flush_method.hpp"

#include <cstdlib>

#include "model/worker_protocol.hpp"
#include "system/error.hpp"

namespace abh::worker {

const std::vector<L2FlushMethodInfo>& l2_flush_methods() {
  static const std::vector<L2FlushMethodInfo> methods = {
      {L2FlushMethod::memset, "memset", "the L2 full of dirty lines of the flush buffer"},
      {L2FlushMethod::read, "read", "the L2 full of clean lines of a buffer written once"},
      {L2FlushMethod::memset_read, "memset-read",
       "the dirty lines of a memset written back by a read of a second buffer: clean lines"},
      {L2FlushMethod::memset_discard, "memset-discard",
       "the lines of a memset discarded (discard.global.L2): invalid lines, nothing to write back"},
  };
  return methods;
}

// The read pass: on the H200 (bench/cold_clean.sh, docs/measurements.md) a 64 MiB copy timed cold
// after it read within 2.2 % of Nsight Compute's --cache-control all, where after a memset it paid
// 9.6 % more (16 % at 32 MiB) writing back the memset's dirty lines. memset-read and
// memset-discard did no better and cost more per sample.
L2FlushMethod default_l2_flush_method() {
  return L2FlushMethod::read;
}

std::string_view l2_flush_method_name(L2FlushMethod m) {
  for (const auto& info : l2_flush_methods())
    if (info.method == m) return info.name;
  throw Error("unknown L2 flush method " + std::to_string(static_cast<int>(m)));
}

L2FlushMethod parse_l2_flush_method(std::string_view name, std::string_view where) {
  std::string names;
  for (const auto& info : l2_flush_methods()) {
    if (info.name == name) return info.method;
    names += (names.empty() ? "" : ", ") + std::string(info.name);
  }
  throw UsageError(std::string(where) + " is '" + std::string(name) +
                   "', which is no L2 flush method: use one of " + names +
                   ", or leave it unset for the default (" +
                   std::string(l2_flush_method_name(default_l2_flush_method())) + ")");
}

L2FlushMethod l2_flush_method_from_env() {
  const char* v = std::getenv(worker_protocol::kL2FlushEnv);
  if (!v || !*v) return default_l2_flush_method();
  return parse_l2_flush_method(v, worker_protocol::kL2FlushEnv);
}

std::string flush_cache_preparation(L2FlushMethod m, std::int64_t bytes) {
  return "flush-" + std::string(l2_flush_method_name(m)) + " " + std::to_string(bytes) + " bytes";
}

}  // namespace abh::worker
