#include "graph_cut.hpp"

#include <algorithm>
#include <set>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh::worker {
namespace {

// Every kernel of the replay came from one graph, each node once, with timestamps.
void check_replay(const std::vector<KernelSpan>& ks) {
  if (ks.empty())
    throw Error(
        "CUPTI saw no kernel in the graph replay: the graph launched nothing, or its "
        "launches were not recorded — refusing to report a time");
  std::set<std::uint64_t> nodes;
  for (const KernelSpan& k : ks) {
    if (k.graph_id == 0)
      throw Error("kernel " + k.name +
                  " ran outside the graph during its replay (CUPTI records no graph for it): "
                  "work launched on another stream or thread would be mixed into the "
                  "iterations — refusing to report a time");
    if (k.graph_id != ks.front().graph_id)
      throw Error("the kernels of one replay came from two graphs (ids " +
                  std::to_string(ks.front().graph_id) + " and " + std::to_string(k.graph_id) + ")");
    if (!nodes.insert(k.graph_node_id).second)
      throw Error("graph node " + std::to_string(k.graph_node_id) + " (" + k.name +
                  ") ran twice in one replay");
    if (k.start == 0 && k.end == 0)
      throw Error("CUPTI kernel record for " + k.name + " has no timestamps (start = end = 0)");
    if (k.end < k.start)
      throw Error("CUPTI kernel record for " + k.name + " ends before it starts");
  }
}

std::vector<std::string> sorted_names(std::vector<KernelSpan>::const_iterator first,
                                      std::vector<KernelSpan>::const_iterator last) {
  std::vector<std::string> names;
  for (auto it = first; it != last; ++it) names.push_back(it->name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

IterationCut cut_iterations(std::vector<KernelSpan> ks, int iterations) {
  if (iterations < 1) throw Error("cut_iterations: no iteration to cut");
  check_replay(ks);
  const std::size_t n = static_cast<std::size_t>(iterations);
  if (ks.size() % n != 0)
    throw Error("the graph replay ran " + std::to_string(ks.size()) + " kernels for " +
                std::to_string(n) +
                " iterations: the number of kernels per iteration varies, so "
                "they cannot be told apart — a capturable problem launches the same kernels "
                "every iteration");
  std::stable_sort(ks.begin(), ks.end(),
                   [](const KernelSpan& a, const KernelSpan& b) { return a.start < b.start; });
  const std::size_t k = ks.size() / n;
  IterationCut cut;
  const std::vector<std::string> first = sorted_names(ks.begin(), ks.begin() + k);
  for (std::size_t i = 0; i < n; ++i) {
    const auto lo = ks.begin() + static_cast<long>(i * k), hi = lo + static_cast<long>(k);
    if (i > 0 && sorted_names(lo, hi) != first) {
      std::vector<std::string> got;
      for (auto it = lo; it != hi; ++it) got.push_back(it->name);
      throw Error("iteration " + std::to_string(i) + " of the graph replay ran [" +
                  join(got, ", ") + "], iteration 0 ran [" + join(cut.kernels, ", ") +
                  "]: the iterations launch different kernels, or their kernels interleave");
    }
    std::uint64_t end = 0;
    for (auto it = lo; it != hi; ++it) {
      end = std::max(end, it->end);
      if (i == 0) cut.kernels.push_back(it->name);
    }
    cut.ns.push_back(static_cast<double>(end - lo->start));
  }
  return cut;
}

}  // namespace abh::worker
