#include "cache_preparation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/timing.hpp"
#include "system/error.hpp"

namespace abh::worker {
namespace {

std::string bytes_text(double b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", b);
  return buf;
}

std::string mib(double b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  return buf;
}

}  // namespace

int choose_buffer_sets(double l2_bytes, double set_bytes, double free_bytes,
                       const std::string& shape) {
  if (!(set_bytes > 0) || !std::isfinite(set_bytes))
    throw Error("shape " + shape + ": the problem offers buffer sets of " + bytes_text(set_bytes) +
                " bytes: buffer_set_bytes must be a positive number of bytes");
  if (!(l2_bytes > 0)) throw Error("the GPU's L2 size is unknown (" + bytes_text(l2_bytes) + ")");
  const double needed = std::ceil(2 * l2_bytes / set_bytes);
  if (needed > kMaxBufferSets)
    throw UsageError("shape " + shape + ": a cold L2 needs " + bytes_text(needed) +
                     " buffer sets of " + bytes_text(set_bytes) + " bytes (2 x the " +
                     mib(l2_bytes) + " L2), more than the " + std::to_string(kMaxBufferSets) +
                     " an arm makes; measure it with --warm-l2, or make each set hold more");
  const int sets = std::max(2, static_cast<int>(needed));
  // Set 0 exists already; an eighth of what is free stays free for the problem's workspace.
  const double room = free_bytes * 7 / 8;
  const double more = (sets - 1) * set_bytes;
  if (more > room)
    throw UsageError("shape " + shape + ": a cold L2 needs " + std::to_string(sets) +
                     " buffer sets of " + mib(set_bytes) + " (2 x the " + mib(l2_bytes) +
                     " L2), but the GPU has " + mib(free_bytes) + " free for the " +
                     std::to_string(sets - 1) + " beyond the first (" + mib(more) +
                     "): measure a smaller shape, or this one with --warm-l2");
  // Raised to kMinBufferSets where the room holds them (sets larger than the L2 would otherwise
  // rotate 2): an arm's median then spans the placements of more copies of its operands.
  const double fit = 1 + std::floor(room / set_bytes);
  return std::max(sets, static_cast<int>(std::min<double>(kMinBufferSets, fit)));
}

CachePlan plan_cache(const CacheFacts& f) {
  CachePlan p;
  if (f.warm_l2 || f.flush_bytes <= 0) {
    p.description = "warm";
    return p;
  }
  if (f.offers_sets) {
    p.kind = CachePlan::Kind::rotation;
    p.sets = choose_buffer_sets(f.l2_bytes, f.set_bytes, f.free_bytes, f.shape);
    p.description =
        "rotation " + std::to_string(p.sets) + " sets x " + bytes_text(f.set_bytes) + " bytes";
    return p;
  }
  if (f.timing == kTimingGraph)
    throw UsageError("the " + f.plugin +
                     " plugin offers no buffer sets, and the graph timing cannot flush the L2 "
                     "between the iterations of a replay: give the problem buffer sets "
                     "(ABH_CAP_BUFFER_SETS of plugin ABI 2; make_buffer_sets and use_buffer_set "
                     "in Python) for a cold L2, or measure the graph timing with --warm-l2");
  p.kind = CachePlan::Kind::flush;
  p.description = "flush-" + f.flush_method + " " + std::to_string(f.flush_bytes) + " bytes";
  return p;
}

}  // namespace abh::worker
