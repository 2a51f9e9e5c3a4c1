// How an arm prepares its caches (worker/cache_preparation.cpp): how many buffer sets a cold L2
// takes from the L2, a set's footprint and the free memory, and which preparation each timing
// gets.
#include <doctest/doctest.h>

#include "cache_preparation.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using namespace abh::worker;
using test::error_of;

namespace {
constexpr double kMiB = 1 << 20;
constexpr double kL2 = 60 * kMiB;  // an H200's L2
constexpr double kFree = 140e9;    // its free memory

CacheFacts gpu_facts(const std::string& timing, bool sets, double set_bytes = 8 * kMiB) {
  CacheFacts f;
  f.timing = timing;
  f.flush_bytes = 120 << 20;
  f.flush_method = "memset";
  f.offers_sets = sets;
  f.set_bytes = sets ? set_bytes : 0;
  f.l2_bytes = kL2;
  f.free_bytes = kFree;
  f.shape = "m1_n4096";
  f.plugin = "spin";
  return f;
}
}  // namespace

TEST_CASE("buffer sets: enough that the sets hold twice the L2, and at least eight") {
  CHECK(choose_buffer_sets(kL2, 8 * kMiB, kFree, "s") == 15);   // 120 MiB / 8 MiB
  CHECK(choose_buffer_sets(kL2, 7 * kMiB, kFree, "s") == 18);   // ceil(120 / 7)
  CHECK(choose_buffer_sets(kL2, 24576, kFree, "s") == 5120);    // a 1-row RMSNorm of 4096
  CHECK(choose_buffer_sets(kL2, 16 * kMiB, kFree, "s") == 8);   // 2 x L2 in exactly 8
  CHECK(choose_buffer_sets(kL2, 20 * kMiB, kFree, "s") == 8);   // 6 would do: raised to 8
  CHECK(choose_buffer_sets(kL2, 120 * kMiB, kFree, "s") == 8);  // 2 would do: raised to 8
  // A bf16 GEMM m32 n19968 k6656 of the reference grid: 266 MB of B in each set, 2 would do.
  CHECK(choose_buffer_sets(kL2, 267.6e6, kFree, "s") == kMinBufferSets);
}

TEST_CASE("buffer sets: raised to eight only as far as 7/8 of the free memory holds them") {
  // 4 GiB sets, 14 GiB free: 7/8 of it (12.25 GiB) holds 3 more, so 4 in all.
  CHECK(choose_buffer_sets(kL2, 4096 * kMiB, 14 * 1024 * kMiB, "s") == 4);
  // Room for exactly one more: the 2 a cold L2 needs, not refused.
  CHECK(choose_buffer_sets(kL2, 4096 * kMiB, 5 * 1024 * kMiB, "s") == 2);
  // Room for 7 more of 1 GiB: exactly 8.
  CHECK(choose_buffer_sets(kL2, 1024 * kMiB, 8 * 1024 * kMiB, "s") == 8);
  // What a cold L2 needs is never lowered by the memory: 15 sets of 8 MiB in 128 MiB free.
  CHECK(choose_buffer_sets(kL2, 8 * kMiB, 128 * kMiB, "s") == 15);
}

TEST_CASE("buffer sets: refused, naming the shape, when memory or the count cannot hold them") {
  const std::string mem = error_of([] { choose_buffer_sets(kL2, 40e9, 40e9, "m8192_big"); });
  CHECK(mem.find("shape m8192_big") != std::string::npos);
  CHECK(mem.find("needs 2 buffer sets") != std::string::npos);
  CHECK(mem.find("--warm-l2") != std::string::npos);
  CHECK_THROWS_AS(choose_buffer_sets(kL2, 40e9, 40e9, "s"), UsageError);
  // 7/8 of the free memory may go to the sets beyond the first (here one more of 60 MiB).
  CHECK(choose_buffer_sets(kL2, 60 * kMiB, 70 * kMiB, "s") == 2);
  CHECK_THROWS_AS(choose_buffer_sets(kL2, 60 * kMiB, 65 * kMiB, "s"), UsageError);
  const std::string many = error_of([] { choose_buffer_sets(kL2, 64, kFree, "tiny"); });
  CHECK(many.find("more than the 65536 an arm makes") != std::string::npos);
  CHECK_THROWS_AS(choose_buffer_sets(kL2, 0, kFree, "s"), Error);
  CHECK_THROWS_AS(choose_buffer_sets(0, 8 * kMiB, kFree, "s"), Error);
}

TEST_CASE("caches: warm with --warm-l2 or on the CPU, whatever the timing and the problem") {
  CacheFacts f = gpu_facts("graph", true);
  f.warm_l2 = true;
  const CachePlan warm = plan_cache(f);
  CHECK(warm.kind == CachePlan::Kind::warm);
  CHECK(warm.sets == 1);
  CHECK(warm.description == "warm");
  CacheFacts cpu = gpu_facts("kernel", false);
  cpu.flush_bytes = 0;
  CHECK(plan_cache(cpu).description == "warm");
}

TEST_CASE("caches: a problem with buffer sets rotates them in every timing, instead of a flush") {
  for (const char* timing : {"kernel", "graph", "launch"}) {
    CAPTURE(timing);
    const CachePlan p = plan_cache(gpu_facts(timing, true));
    CHECK(p.kind == CachePlan::Kind::rotation);
    CHECK(p.sets == 15);
    CHECK(p.description == "rotation 15 sets x 8388608 bytes");
  }
}

TEST_CASE("caches: without sets the kernel and launch timings flush, the graph timing refuses") {
  for (const char* timing : {"kernel", "launch"}) {
    const CachePlan p = plan_cache(gpu_facts(timing, false));
    CHECK(p.kind == CachePlan::Kind::flush);
    CHECK(p.sets == 1);
    CHECK(p.description == "flush-memset 125829120 bytes");
  }
  const std::string why = error_of([] { plan_cache(gpu_facts("graph", false)); });
  CHECK(why.find("the spin plugin offers no buffer sets") != std::string::npos);
  CHECK(why.find("--warm-l2") != std::string::npos);
  CHECK_THROWS_AS(plan_cache(gpu_facts("graph", false)), UsageError);
}
