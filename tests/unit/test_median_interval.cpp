// The median's distribution-free interval (stats/median_interval.hpp): the exact binomial ranks,
// its coverage on simulated samples (independent and skewed, and dependent), and how it narrows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stats/median_interval.hpp"
#include "stats/statistics.hpp"

using namespace abh;

TEST_CASE("median interval: the exact binomial ranks") {
  // 1 - 2 * 2^-n reaches 95 % first at n = 6; n = 10 gives ranks 2 and 9 (97.9 %; 3 would be 89 %);
  // n = 100 gives 40 and 61, the textbook table's.
  CHECK(median_rank(5, 0.95) == 0);
  CHECK(median_rank(6, 0.95) == 1);
  CHECK(median_rank(10, 0.95) == 2);
  CHECK(median_rank(100, 0.95) == 40);
  CHECK(median_rank(100, 0.99) == 37);
  CHECK(median_rank(1, 0.5) == 0);
  // Large n: n/2 - 1.96 sqrt(n)/2, within a rank.
  CHECK(std::abs(median_rank(100000, 0.95) - (50000 - 1.959964 * std::sqrt(1e5) / 2)) < 1.5);

  CHECK_FALSE(median_interval(std::vector<double>(5, 1.0), 0.95));
  auto ci = median_interval(std::vector<double>{5, 1, 4, 2, 3, 6}, 0.95);
  REQUIRE(ci);
  CHECK(ci->median == 3.5);
  CHECK(ci->lo == 1);
  CHECK(ci->hi == 6);
  CHECK(ci->inflation == 1);
  CHECK(ci->half_width() == doctest::Approx(5.0 / 2 / 3.5));
}

namespace {

// How often the 95 % interval of `n` samples from `draw` holds `truth`, over `trials` seeds.
template <typename Draw>
double coverage(int trials, int n, double truth, Draw draw) {
  int held = 0;
  for (int t = 0; t < trials; ++t) {
    Rng rng(1000 + static_cast<std::uint64_t>(t));
    std::vector<double> v = draw(rng, n);
    auto ci = median_interval(v, 0.95);
    REQUIRE(ci);
    if (ci->lo <= truth && truth <= ci->hi) ++held;
  }
  return static_cast<double>(held) / trials;
}

// Independent, skewed: 1000 ns plus an exponential tail of mean 50 ns (median 1000 + 50 ln 2),
// with one sample in 100 preempted (+100 us): a CPU arm's shape.
std::vector<double> skewed(Rng& rng, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    double x = 1000 - 50 * std::log(rng.uniform());
    if (rng.uniform() < 0.01) x += 1e5;
    v.push_back(x);
  }
  return v;
}
double skewed_median() {
  // The mixture's median: F(m) = 0.99 (1 - exp(-(m - 1000) / 50)) = 1/2.
  return 1000 - 50 * std::log(1 - 0.5 / 0.99);
}

// Dependent: AR(1) with correlation `rho` between neighbours, as a clock that wanders slowly.
std::vector<double> ar1(Rng& rng, int n, double rho) {
  std::vector<double> v;
  double e = rng.normal();
  for (int i = 0; i < n; ++i) {
    e = rho * e + std::sqrt(1 - rho * rho) * rng.normal();
    v.push_back(1000 + 10 * e);
  }
  return v;
}

}  // namespace

TEST_CASE("median interval: holds the true median at about the nominal rate, skew and outliers") {
  // The exact interval is conservative by construction (at least 95 %, more for small n).
  for (int n : {50, 200, 2000}) {
    const double c = coverage(1000, n, skewed_median(), skewed);
    INFO("n = " << n << ", coverage " << c);
    CHECK(c >= 0.93);
    CHECK(c <= 0.99);
  }
}

TEST_CASE("median interval: dependent samples widen it back to the nominal rate") {
  auto dependent = [](Rng& rng, int n) { return ar1(rng, n, 0.8); };
  const double c = coverage(500, 2000, 1000, dependent);
  INFO("coverage " << c);
  CHECK(c >= 0.88);
  CHECK(c <= 0.995);
  // The plain order-statistic interval, which takes the samples for independent ones, misses the
  // median far more often: what the inflation is for.
  int held = 0;
  for (int t = 0; t < 500; ++t) {
    Rng rng(1000 + static_cast<std::uint64_t>(t));
    std::vector<double> v = dependent(rng, 2000);
    std::vector<double> s = v;
    std::sort(s.begin(), s.end());
    const long j = median_rank(2000, 0.95);
    if (s[j - 1] <= 1000 && 1000 <= s[2000 - j]) ++held;
  }
  INFO("plain coverage " << held / 500.0);
  CHECK(held / 500.0 < 0.8);
  // Independent samples are not penalized: the inflation stays near 1.
  Rng rng(5);
  auto ci = median_interval(ar1(rng, 4000, 0.0), 0.95);
  REQUIRE(ci);
  CHECK(ci->inflation < 1.6);
}

TEST_CASE("median interval: narrows as 1 / sqrt(n), and ties give a point") {
  Rng rng(11);
  std::vector<double> v = skewed(rng, 16000);
  auto quarter = median_interval(std::span<const double>(v).first(4000), 0.95);
  auto all = median_interval(v, 0.95);
  REQUIRE(quarter);
  REQUIRE(all);
  CHECK(all->half_width() / quarter->half_width() == doctest::Approx(0.5).epsilon(0.25));
  // A coarse timer: most samples on one tick. The median is that tick, known exactly.
  std::vector<double> ticks;
  for (int i = 0; i < 300; ++i) ticks.push_back(i % 5 == 0 ? 60 : 50);
  auto t = median_interval(ticks, 0.95);
  REQUIRE(t);
  CHECK(t->lo == 50);
  CHECK(t->hi == 50);
  CHECK(t->half_width() == 0);
}
