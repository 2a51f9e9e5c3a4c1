// Ties at the timer's tick (stats/tick_ties.hpp): samples without ties are left alone, tied ones
// are spread along the mid-distribution quantile function, and on a kernel read through a 32 ns
// tick at a random phase the spread samples' median and interval find the time between the ticks
// that the plain median cannot.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stats/median_interval.hpp"
#include "stats/statistics.hpp"
#include "stats/tick_ties.hpp"

using namespace abh;

namespace {

// A kernel of `ns` (and a little normal jitter) timed by a timer of `tick` ns: both stamps are
// rounded down to the tick, the start at a random phase of it, as the GPU's global timer does.
std::vector<double> ticked(Rng& rng, int n, double ns, double jitter, double tick) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    const double start = tick * rng.uniform();
    const double end = start + ns + jitter * rng.normal();
    v.push_back(tick * (std::floor(end / tick) - std::floor(start / tick)));
  }
  return v;
}

// The same readings as CUPTI gives them: one in seven a nanosecond off the grid either way.
std::vector<double> blurred(Rng& rng, std::vector<double> v) {
  for (double& x : v) {
    const double u = rng.uniform();
    x += u < 1.0 / 14 ? -1 : u > 13.0 / 14 ? 1 : 0;
  }
  return v;
}

}  // namespace

TEST_CASE("tick ties: samples without ties are left as they are") {
  const std::vector<double> v{5, 1, 4, 2, 3};
  CHECK(spread_groups(v) == v);
  CHECK(spread_groups(std::vector<double>{}).empty());
  CHECK(spread_groups(std::vector<double>{7}) == std::vector<double>{7});
}

TEST_CASE("tick ties: a group sits at the middle of its share, the quantile function joins them") {
  // 1, 1, 2, 2: the groups' mid levels are 1/4 and 3/4; sample i (sorted) moves to the quantile
  // function at (i - 1/2) / 4. Each sample keeps its place, and a 1 stays below a 2.
  const std::vector<double> t = spread_groups(std::vector<double>{2, 1, 2, 1});
  CHECK(t[0] > 1.5);
  CHECK(t[1] < 1.5);
  CHECK(t[2] > 1.5);
  CHECK(t[3] < 1.5);
  std::vector<double> sorted = t;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == std::vector<double>{1, 1.25, 1.75, 2});
  // Four ties in five at 50, one at 60: the median reads 50 + 10 * (1/2 - 2/5) / (9/10 - 2/5),
  // i.e. 52, the time that reads 60 one time in five when the phase is random.
  const std::vector<double> s = spread_groups(std::vector<double>{50, 50, 60, 50, 50});
  CHECK(median(s) == doctest::Approx(52));
  // All equal: nothing to read between.
  CHECK(spread_groups(std::vector<double>(4, 3.0)) == std::vector<double>(4, 3.0));
}

TEST_CASE("tick ties: the time between two ticks, where the plain median flips a whole tick") {
  Rng rng(3);
  for (double ns : {1700.0, 1712.0, 1723.0}) {
    const std::vector<double> v = ticked(rng, 4000, ns, 2, 32);
    const double plain = median(v);
    CHECK((plain == 1696 || plain == 1728));
    const std::vector<double> s = spread_ties(v, 32);
    INFO(ns << " ns: plain " << plain << ", spread " << median(s));
    CHECK(median(s) == doctest::Approx(ns).epsilon(0.002));  // within 3.4 ns of 1.7 us
    // And the interval narrows below the tick: 0.1 % here at 4,000 samples.
    auto ci = median_interval(s, 0.95);
    REQUIRE(ci);
    CHECK(ci->half_width() < 0.001);
    auto plain_ci = median_interval(v, 0.95);
    REQUIRE(plain_ci);
    if (std::abs(ns - 1712) < 1) CHECK(plain_ci->hi - plain_ci->lo == 32);
  }
}

TEST_CASE("tick ties: spread values do not follow the order the samples came in") {
  // Else the first of a group would all fall below the median and the last above: a trend the
  // interval's dependence check reads as strongly dependent samples, widening it.
  const std::vector<double> s = spread_groups(std::vector<double>(1000, 5.0));
  CHECK(s == std::vector<double>(1000, 5.0));
  std::vector<double> v;
  for (int i = 0; i < 4000; ++i) v.push_back(i % 2 ? 10 : 11);  // no trend at all
  auto ci = median_interval(spread_groups(v), 0.95);
  REQUIRE(ci);
  CHECK(ci->inflation < 1.5);  // spread in the order taken, they would trend: far above
}

TEST_CASE("tick ties: readings a nanosecond off the tick are taken as the tick's") {
  Rng rng(9);
  for (double ns : {1700.0, 1712.0}) {
    const std::vector<double> v = blurred(rng, ticked(rng, 20000, ns, 2, 32));
    CHECK(on_tick_grid(v, 32));
    const std::vector<double> s = spread_ties(v, 32);
    CHECK(median(s) == doctest::Approx(ns).epsilon(0.002));
    auto ci = median_interval(s, 0.95);
    REQUIRE(ci);
    CHECK(ci->lo <= ns);
    CHECK(ns <= ci->hi);
    if (ns != 1700) continue;
    // A timer whose tick is not known (0): its readings are taken as they are, plain median.
    CHECK(spread_ties(v, 0) == v);
    // Taken as values of their own, the satellites pin the median to the tick below (seven in
    // eight samples read 1,696), and its interval claims a precision it does not have.
    auto pinned = median_interval(spread_groups(v), 0.95);
    REQUIRE(pinned);
    INFO("pinned " << pinned->median << " [" << pinned->lo << ", " << pinned->hi << "]");
    CHECK(std::abs(pinned->median - 1696) < 2);
    CHECK(pinned->hi < ns);
  }
  // Samples off the grid (a host timer's nanoseconds) are not rounded to it.
  std::vector<double> host;
  for (int i = 0; i < 1000; ++i) host.push_back(1700 + 30 * rng.uniform());
  CHECK_FALSE(on_tick_grid(host, 32));
  CHECK(spread_ties(host, 32) == host);
  CHECK_FALSE(on_tick_grid(std::vector<double>{1696, 1728}, 0));
  // Not a timer's reading: left as it is, for the report to refuse the arm.
  const std::vector<double> nan{1696, std::nan(""), 1728};
  CHECK_FALSE(on_tick_grid(nan, 32));
  CHECK(std::isnan(spread_ties(nan, 32)[1]));
}

TEST_CASE("tick ties: the spread samples' interval holds the true time at least at its level") {
  // Conservative by design (tick_ties.hpp): the shares move by less than the order statistics.
  int held = 0;
  const int trials = 300;
  for (int t = 0; t < trials; ++t) {
    Rng rng(100 + static_cast<std::uint64_t>(t));
    const double ns = 1696 + 32 * rng.uniform();
    auto ci = median_interval(spread_ties(ticked(rng, 1500, ns, 0.5, 32), 32), 0.95);
    REQUIRE(ci);
    if (ci->lo <= ns && ns <= ci->hi) ++held;
  }
  INFO("held " << held << " of " << trials);
  CHECK(held >= 0.93 * trials);
}

TEST_CASE("tick ties: a clock's tick, from the gaps between its successive readings") {
  Rng rng(3);
  auto gaps = [&rng](int n, auto draw) {
    std::vector<double> g;
    for (int i = 0; i < n; ++i) g.push_back(draw());
    return g;
  };
  // The CI machine's steady clock: a 10 ns grid with 1 ns satellites, calls of 20-60 ns.
  const auto vm = gaps(10000, [&] {
    const double u = rng.uniform(), v = rng.uniform();
    return 10.0 * (2 + std::floor(4 * u)) + (v < 0.1 ? -1 : v > 0.9 ? 1 : 0);
  });
  CHECK(clock_tick_ns(vm) == 10);
  // A 1 ns clock under a call that steadily costs 20-21 ns: not a 20 ns tick.
  const auto fine = gaps(10000, [&] { return 20.0 + std::floor(2 * rng.uniform()); });
  CHECK(clock_tick_ns(fine) == 1);
  // A clock coarser than a call: most successive readings are equal, the others one tick on.
  const auto coarse = gaps(10000, [&] { return rng.uniform() < 0.8 ? 0.0 : 100.0; });
  CHECK(clock_tick_ns(coarse) == 100);
  // A preempted reading or a few stray gaps do not move it; too few gaps say nothing.
  auto preempted = vm;
  preempted[17] = 5e6;
  preempted[18] = 17;
  CHECK(clock_tick_ns(preempted) == 10);
  CHECK(clock_tick_ns(std::vector<double>(vm.begin(), vm.begin() + 50)) == 0);
  CHECK(clock_tick_ns({}) == 0);
}
