// The graph timer's arithmetic (worker/graph_cut.cpp): the kernels CUPTI recorded in one replay,
// cut into its iterations, or refused when they cannot be told apart.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "graph_cut.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using namespace abh::worker;
using test::error_of;

namespace {

// A replay of `iterations` iterations, each running the kernels `names` back to back: kernel j of
// iteration i starts at 1000 * i + 100 * j + offset and runs `ns` (graph 7, node ids in order).
std::vector<KernelSpan> replay(int iterations, const std::vector<std::string>& names,
                               std::uint64_t ns = 50) {
  std::vector<KernelSpan> out;
  std::uint64_t node = 1;
  for (int i = 0; i < iterations; ++i)
    for (std::size_t j = 0; j < names.size(); ++j) {
      const std::uint64_t start = 10000 + 1000 * static_cast<std::uint64_t>(i) + 100 * j;
      out.push_back({start, start + ns, names[j], 7, node++});
    }
  return out;
}

}  // namespace

TEST_CASE("graph cut: N iterations of k kernels give N times from first start to last end") {
  std::vector<KernelSpan> ks = replay(4, {"norm", "scale", "cast"});
  // CUPTI hands records over in no promised order.
  std::shuffle(ks.begin(), ks.end(), std::mt19937(3));
  const IterationCut cut = cut_iterations(ks, 4);
  // Three kernels of 50 ns at 0, 100 and 200 ns: 250 ns, the gaps between them included.
  CHECK(cut.ns == std::vector<double>(4, 250.0));
  CHECK(cut.kernels == std::vector<std::string>{"norm", "scale", "cast"});
  const IterationCut one = cut_iterations(replay(5, {"spin"}, 1234), 5);
  CHECK(one.ns == std::vector<double>(5, 1234.0));
}

TEST_CASE("graph cut: an overlapping kernel (programmatic dependent launch) counts to its end") {
  std::vector<KernelSpan> ks = replay(2, {"a", "b"});
  ks[1].start = ks[0].start + 20;  // b of iteration 0 starts before a ends, and outlasts it
  ks[1].end = ks[0].start + 620;
  const IterationCut cut = cut_iterations(ks, 2);
  CHECK(cut.ns[0] == 620.0);
  CHECK(cut.ns[1] == 150.0);
}

TEST_CASE("graph cut: a kernel count that does not divide into the iterations is refused") {
  std::vector<KernelSpan> ks = replay(3, {"a", "b"});
  ks.pop_back();
  CHECK(error_of([&] { cut_iterations(ks, 3); }).find("ran 5 kernels for 3 iterations") !=
        std::string::npos);
  // Divisible, but iterations ran 1, 2 and 3 kernels: the chunks differ.
  std::vector<KernelSpan> varying = replay(1, {"a"});
  for (const auto& k : replay(1, {"a", "a"}))
    varying.push_back({k.start + 1000, k.end + 1000, k.name, 7, k.graph_node_id + 10});
  for (const auto& k : replay(1, {"a", "b", "b"}))
    varying.push_back({k.start + 2000, k.end + 2000, k.name, 7, k.graph_node_id + 20});
  CHECK(error_of([&] { cut_iterations(varying, 3); }).find("launch different kernels") !=
        std::string::npos);
}

TEST_CASE("graph cut: kernels from outside the graph or from another graph are refused") {
  std::vector<KernelSpan> ks = replay(2, {"a"});
  ks.push_back({10500, 10600, "foreign", 0, 0});
  CHECK(error_of([&] { cut_iterations(ks, 2); }).find("kernel foreign ran outside the graph") !=
        std::string::npos);
  ks.back().graph_id = 8;
  ks.back().graph_node_id = 99;
  CHECK(error_of([&] { cut_iterations(ks, 3); }).find("came from two graphs") != std::string::npos);
}

TEST_CASE("graph cut: a node twice, records without time, or no kernel at all are refused") {
  std::vector<KernelSpan> ks = replay(2, {"a"});
  ks[1].graph_node_id = ks[0].graph_node_id;
  CHECK(error_of([&] { cut_iterations(ks, 2); }).find("ran twice in one replay") !=
        std::string::npos);
  ks = replay(2, {"a"});
  ks[1].start = ks[1].end = 0;
  CHECK(error_of([&] { cut_iterations(ks, 2); }).find("has no timestamps") != std::string::npos);
  ks = replay(2, {"a"});
  ks[0].end = ks[0].start - 1;
  CHECK(error_of([&] { cut_iterations(ks, 2); }).find("ends before it starts") !=
        std::string::npos);
  CHECK(error_of([] { cut_iterations({}, 4); }).find("saw no kernel in the graph replay") !=
        std::string::npos);
  CHECK_THROWS_AS(cut_iterations(replay(1, {"a"}), 0), Error);
}
