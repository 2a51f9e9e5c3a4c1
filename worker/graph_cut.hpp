// The iterations of one CUDA graph replay, cut from the kernels CUPTI recorded inside it: the
// graph timer's arithmetic, apart from CUDA so that a unit test can feed it records.
//
// A replay of N captured iterations runs N x k kernels (k per iteration). Sorted by start, they are
// cut into N consecutive chunks of k; one iteration's time is its first kernel's start to its last
// kernel's end, so the gaps between an iteration's kernels count, and so does the overlap of a
// programmatic dependent launch. The cut fails — never guesses — when the kernels do not divide
// into N equal chunks, when a chunk holds other kernels than the first, when a kernel ran outside
// a graph or in another graph, when a graph node ran twice, or when a record has no timestamps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace abh::worker {

struct KernelSpan {
  std::uint64_t start = 0, end = 0;  // ns, CUPTI's clock
  std::string name;
  std::uint32_t graph_id = 0;       // 0: not launched by a graph
  std::uint64_t graph_node_id = 0;  // the graph node that launched it
};

struct IterationCut {
  std::vector<double> ns;            // one per iteration, in order
  std::vector<std::string> kernels;  // the first iteration's kernels, in start order
};

// Throws Error naming what is wrong. `iterations` >= 1.
IterationCut cut_iterations(std::vector<KernelSpan> kernels, int iterations);

}  // namespace abh::worker
