// How an arm's caches are prepared before each timed iteration, chosen once per arm: nothing
// (warm), a flush of the L2 (a buffer larger than the L2 written outside the timed window), or a
// rotation through buffer sets — copies of the problem's inputs and outputs (plugin ABI 2), enough
// of them that an iteration's set was last touched two L2s of traffic ago, and at least
// kMinBufferSets. A rotation prepares a cold L2 without any work between iterations, which is
// what lets the graph timing replay iterations back to back; the kernel timing uses it in place
// of the flush when the problem offers sets. The choice is recorded in the result
// (cache_preparation).
#pragma once

#include <cstdint>
#include <string>

namespace abh::worker {

// The most buffer sets an arm makes: a problem of ~2 KB per set on an H200 (60 MiB L2) would need
// more, and a graph of that many iterations.
inline constexpr int kMaxBufferSets = 65536;

// The fewest buffer sets an arm rotates where the device holds them. Operands larger than the L2
// need only 2 sets for a cold L2, but the placement of each copy in device memory moves a
// memory-bound GEMM's time: on the H200 the medians of one arm's sets differed by 1.1 % (median
// over arms) and up to 12 %, and the 16-shape bf16 reference-grid A/A (sets of 267-484 MB) read
// `same` on 56 of 64 shapes with 8 sets against 16 of 64 with 2, 22 of 48 with 32 (which also
// read the 512-row shapes about 3 % slower) and 16 of 48 with a flush of one set instead
// (docs/measurements.md §31).
inline constexpr int kMinBufferSets = 8;

// What the arm knows when it chooses.
struct CacheFacts {
  std::string timing;            // kernel | graph | launch (model/timing.hpp)
  bool warm_l2 = false;          // --warm-l2
  std::int64_t flush_bytes = 0;  // what a flush writes; 0: the device flushes nothing (CPU)
  std::string flush_method;      // e.g. "memset"
  bool offers_sets = false;      // ABH_CAP_BUFFER_SETS
  double set_bytes = 0;          // buffer_set_bytes(), when offered
  double l2_bytes = 0;           // the GPU's L2
  double free_bytes = 0;         // device memory free with set 0 made
  std::string shape;             // names the shape in a refusal
  std::string plugin;
};

struct CachePlan {
  enum class Kind { warm, flush, rotation };
  Kind kind = Kind::warm;
  int sets = 1;  // buffer sets to make and cycle through (rotation), else 1
  // The result's cache_preparation: "warm", "flush-memset 125829120 bytes",
  // "rotation 12 sets x 10485760 bytes".
  std::string description;
};

// The smallest count S >= 2 with S x set_bytes >= 2 x l2_bytes, raised to kMinBufferSets as far
// as 7/8 of the free memory holds the sets beyond the first. Throws UsageError naming the shape
// when the device cannot hold S - 1 more sets (with 1/8 of its free memory kept free), or S
// exceeds kMaxBufferSets.
int choose_buffer_sets(double l2_bytes, double set_bytes, double free_bytes,
                       const std::string& shape);

// The arm's preparation: warm with --warm-l2 or on a device without a flush; otherwise a rotation
// when the problem offers buffer sets, else the flush — except for the graph timing, which cannot
// flush between the iterations of a replay and refuses a cold L2 without sets (UsageError naming
// the plugin and the fix).
CachePlan plan_cache(const CacheFacts& f);

}  // namespace abh::worker
