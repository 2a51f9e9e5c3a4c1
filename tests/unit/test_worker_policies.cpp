// The worker's measurement policies, without a GPU: the clock floor's arithmetic and decisions,
// the stopping rules, and the sampling loop driven by a scripted timer and clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "clock_guard.hpp"
#include "sampling.hpp"
#include "stats/median_interval.hpp"
#include "stats/statistics.hpp"
#include "stopping.hpp"
#include "system/error.hpp"

using namespace abh;
using namespace abh::worker;

TEST_CASE("clock reading: cycles over nanoseconds, with an upper bound one timer tick wide") {
  ClockReading r;
  // 1 980 000 cycles in 1 000 000 ns: 1980 MHz; a 32 ns tick allows at most 1980.06 MHz.
  REQUIRE(clock_reading(5'000'000, 100, 6'000'000, 100 + 1'980'000, 32, &r));
  CHECK(r.mhz == doctest::Approx(1980.0));
  CHECK(r.mhz_high == doctest::Approx(1980.0 * 1e6 / (1e6 - 32)));
  // A 40 us sample read with a 1 us tick: the bound is 1/39 above the reading.
  REQUIRE(clock_reading(0 + 1, 0 + 1, 40'001, 40'000 * 1.5 + 1, 1000, &r));
  CHECK(r.mhz == doctest::Approx(1500.0));
  CHECK(r.mhz_high == doctest::Approx(1500.0 * 40.0 / 39.0));
  // A tick as long as the interval: no upper bound, so the floor can never discard it.
  REQUIRE(clock_reading(1, 1, 1001, 2001, 1000, &r));
  CHECK(std::isinf(r.mhz_high));
  // Stamps out of order (two SMs' counters, a reset) give no reading at all.
  CHECK_FALSE(clock_reading(10, 10, 10, 20, 1, &r));
  CHECK_FALSE(clock_reading(10, 20, 30, 20, 1, &r));
}

TEST_CASE("clock floor: discards only samples whose upper bound is below the floor") {
  ClockGuard off(1980, 0.0);
  CHECK_FALSE(off.enabled());
  CHECK(off.admit({{100, 100}, {2000, 2000}}) == std::vector<bool>{true, true});
  CHECK(off.rejected() == 0);

  ClockGuard cpu(0, 0.97);  // a CPU plugin has no peak clock: nothing to check
  CHECK_FALSE(cpu.enabled());

  ClockGuard g(1980, 0.97);
  REQUIRE(g.enabled());
  CHECK(g.floor_mhz() == 1921);
  // At peak; power-capped at 1485 MHz; read below the floor but possibly above it given the tick.
  std::vector<bool> keep = g.admit({{1980, 1981}, {1485, 1490}, {1900, 1925}, {1920.9, 1920.9}});
  CHECK(keep == std::vector<bool>{true, false, true, false});
  CHECK(g.rejected() == 2);
  g.admit({{1000, 1000}});
  CHECK(g.rejected() == 3);  // counts across batches
}

TEST_CASE("clock guard: a reading above the peak is not the floor's discard, and many fail") {
  ClockGuard off(2000, 0.0);  // with the floor off, above the peak is still no clock
  CHECK(off.admit({{2100, 2101}, {2101, 2102}, {1500, 1501}}) ==
        std::vector<bool>{true, false, true});
  CHECK(off.above_peak() == 1);
  CHECK(off.rejected() == 0);

  ClockGuard g(2000, 0.5);
  std::vector<ClockReading> batch(100, ClockReading{1500, 1501});
  batch[10] = batch[50] = {2200, 2201};
  const std::vector<bool> keep = g.admit(batch);
  CHECK(std::count(keep.begin(), keep.end(), false) == 2);
  CHECK_FALSE(keep[10]);
  CHECK(g.above_peak() == 2);
  // Tolerated: 2 plus 1 % of the readings seen, so a third passes after 101 readings, a fourth
  // after 102 does not.
  g.admit({{2300, 2301}});
  CHECK(g.above_peak() == 3);
  CHECK_THROWS_WITH_AS(g.admit({{2300, 2301}}), doctest::Contains("2300 MHz"), Error);

  CHECK(above_peak_note(0, 1980).empty());
  CHECK(above_peak_note(1, 1980) ==
        "1 sample discarded: the clock probe read its clock above the GPU's 1980 MHz peak, so the "
        "GPU's timer stepped during it");
  CHECK(above_peak_note(2, 1980).starts_with("2 samples discarded"));
}

namespace {
MeasureSettings stdrel_settings() {
  MeasureSettings s;
  s.stopping = "stdrel";
  s.min_samples = 10;
  s.min_time_s = 0;  // the rule alone: the wall-clock floor has its own case
  s.max_noise = 0.005;
  s.max_time_s = 1;
  return s;
}

const StoppingGoal kGoal{0.01, 0.95};  // the defaults: a 1 % band, 95 % intervals

// Progress with `measured_s` of samples and as much wall time.
Progress at(double measured_s) {
  return {measured_s, measured_s};
}

// Feeds `rule` batches of `draw()` samples the way the sampling loop does (a quarter of what
// there is, at least 10 at once) until it stops or `cap` samples; the decision and the samples.
template <typename Draw>
std::pair<StopDecision, std::vector<double>> run_rule(StoppingRule& rule, Draw draw,
                                                      size_t cap = 200000) {
  std::vector<double> v;
  double measured = 0;
  StopDecision d;
  while (!d.stop && v.size() < cap) {
    const size_t batch = std::max<size_t>(10, v.size() / 4);
    for (size_t i = 0; i < batch; ++i) {
      v.push_back(draw());
      measured += v.back() * 1e-9;
    }
    d = rule.check(v, at(measured));
  }
  return {d, v};
}
}  // namespace

TEST_CASE("stdrel: stops at the noise target once the minimums are met") {
  auto rule = make_stopping_rule(stdrel_settings(), kGoal);
  std::vector<double> v;
  for (int i = 0; i < 9; ++i) v.push_back(1000 + (i % 3));  // 0.1 % spread
  CHECK_FALSE(rule->check(v, at(0.5)).stop);                // fewer than min_samples
  v.push_back(1001);
  StopDecision d = rule->check(v, at(0.5));
  CHECK(d.stop);
  CHECK(d.cause == StopCause::noise);
  CHECK(d.reason.find("<= 0.50%") != std::string::npos);
}

TEST_CASE("stdrel: a noisy arm stops once its noise has converged, and says so") {
  auto rule = make_stopping_rule(stdrel_settings(), kGoal);
  Rng rng(7);
  auto noise = [&] { return 1000 * (1 + 0.02 * rng.normal()); };  // 2 %: never under 0.5 %
  std::vector<double> v;
  StopDecision d;
  while (!d.stop && v.size() < 100000) {
    for (int i = 0; i < 10; ++i) v.push_back(noise());
    d = rule->check(v, at(0.01));
  }
  REQUIRE(d.stop);
  CHECK(d.cause == StopCause::converged);
  CHECK(d.reason.find("converged") != std::string::npos);
  CHECK(v.size() < 2000);
}

TEST_CASE("stdrel: the time limit stops an arm that neither meets nor settles its noise") {
  auto s = stdrel_settings();
  auto rule = make_stopping_rule(s, kGoal);
  std::vector<double> v;
  for (int i = 0; i < 20; ++i) v.push_back(i % 2 ? 1000 : 1500);
  StopDecision d = rule->check(v, at(0.5));
  CHECK_FALSE(d.stop);
  d = rule->check(v, at(1.0));
  CHECK(d.stop);
  CHECK(d.cause == StopCause::time_limit);
  CHECK(d.reason.find("time limit") != std::string::npos);
}

TEST_CASE("precision: at the sample limit before --min-time, a target met is the reason") {
  // A 50 ns CPU kernel in a fast loop can take the 100,000 samples inside the 0.1 s floor.
  MeasureSettings s;
  s.max_samples = 1000;
  s.min_time_s = 10;
  auto rule = make_stopping_rule(s, kGoal);
  std::vector<double> v(1000, 500.0);
  for (std::size_t i = 0; i < v.size(); i += 2) v[i] = 501;
  const StopDecision d = rule->check(v, Progress{});
  CHECK(d.stop);
  CHECK(d.cause == StopCause::precision);
  CHECK(d.reason.find("target after 1000 samples, the sample limit, before --min-time") !=
        std::string::npos);
  // Below the limit, the floor still holds it.
  v.resize(999);
  CHECK_FALSE(rule->check(v, Progress{}).stop);
}

TEST_CASE("a warm-up arm's wall limit stops any rule, but never before the rule would") {
  // A noisy arm the precision rule would sample for long: the warm-up's wall limit ends it.
  MeasureSettings s;
  StoppingGoal goal = kGoal;
  goal.wall_limit_s = kWarmUpArmWallS;
  auto rule = make_stopping_rule(s, goal);
  CHECK(rule->name() == "precision");
  std::vector<double> v;
  for (int i = 0; i < 200; ++i) v.push_back(i % 2 ? 1000 : 1500);
  Progress p;
  p.wall_s = 0.5;
  CHECK_FALSE(rule->check(v, p).stop);
  p.wall_s = kWarmUpArmWallS;
  const StopDecision d = rule->check(v, p);
  CHECK(d.stop);
  CHECK(d.cause == StopCause::time_limit);
  CHECK(d.reason.find("warm-up arm") != std::string::npos);
  // Without the limit the same arm goes on; with it, a rule that stops anyway says its own reason.
  CHECK_FALSE(make_stopping_rule(s, kGoal)->check(v, p).stop);
  s.stopping = "fixed";
  s.min_samples = 10;
  CHECK(make_stopping_rule(s, goal)->check(v, Progress{}).reason == "fixed 10 samples");
}

TEST_CASE("fixed: exactly min_samples, and unknown rules are refused") {
  auto s = stdrel_settings();
  s.stopping = "fixed";
  auto rule = make_stopping_rule(s, kGoal);
  CHECK_FALSE(rule->check(std::vector<double>(9, 1.0), {}).stop);
  CHECK(rule->check(std::vector<double>(10, 1.0), {}).stop);
  s.stopping = "forever";
  CHECK_THROWS_WITH_AS(make_stopping_rule(s, kGoal),
                       doctest::Contains("use one of fixed, precision, stdrel"), UsageError);
}

TEST_CASE("precision: the default rule, its target a tenth of the band unless given") {
  MeasureSettings s;
  CHECK(s.stopping == "precision");
  CHECK(s.min_time_s == doctest::Approx(0.1));
  CHECK(precision_target(s, kGoal) == doctest::Approx(0.001));
  CHECK(precision_target(s, {0.03, 0.95}) == doctest::Approx(0.003));
  s.median_precision = 0.0004;
  CHECK(precision_target(s, kGoal) == doctest::Approx(0.0004));
  CHECK(make_stopping_rule(s, kGoal)->target() == doctest::Approx(0.0004));
  CHECK_FALSE(make_stopping_rule(stdrel_settings(), kGoal)->target());
}

TEST_CASE("precision: stops far earlier than stdrel on a low-noise microsecond kernel") {
  // A 2 us kernel with 0.3 % spread. stdrel with the old 0.2 s of summed kernel time needs
  // 100 000 samples before its noise test may even stop; the median is known to 0.1 % after
  // about (1.96 * 1.2533 * 0.3 / 0.1)^2 = 54.
  Rng rng(3);
  auto draw = [&] { return 2000 * (1 + 0.003 * rng.normal()); };
  MeasureSettings old = stdrel_settings();
  old.min_time_s = 0.2;
  old.max_time_s = 10;
  old.max_samples = 100000;
  auto stdrel = make_stopping_rule(old, kGoal);
  auto [ds, vs] = run_rule(*stdrel, draw);
  MeasureSettings now;
  now.min_time_s = 0;  // the rule alone: the wall-clock floor has its own case
  now.max_samples = 100000;
  auto precision = make_stopping_rule(now, kGoal);
  auto [dp, vp] = run_rule(*precision, draw);
  REQUIRE(ds.stop);
  REQUIRE(dp.stop);
  CHECK(dp.cause == StopCause::precision);
  CHECK(vs.size() >= 90000);
  CHECK(vp.size() < 1000);
  INFO(dp.reason);
  CHECK(dp.reason.find("<= 0.1% target after") != std::string::npos);
  const auto ci = median_interval(vp, 0.95);
  REQUIRE(ci);
  CHECK(ci->half_width() <= 0.001);
}

TEST_CASE("precision: far from its baseline, a candidate arm's median needs less precision") {
  // Within the band, or with no baseline yet: the run's target.
  CHECK(far_precision_target(0.001, 0.01, 2000, 0) == 0.001);
  CHECK(far_precision_target(0.001, 0.01, 2000, 2010) == 0.001);
  CHECK(far_precision_target(0.001, 0.01, 2000, 2000 * 1.012) == 0.001);
  // 5 % beyond: a quarter of (log 1.05 - log 1.01) = 0.97 %, at most half the band.
  CHECK(far_precision_target(0.001, 0.01, 2000, 2100) == doctest::Approx(0.005));
  CHECK(far_precision_target(0.001, 0.03, 2000, 2100) ==
        doctest::Approx((std::log(1.05) - std::log(1.03)) / 4));
  // Faster or slower alike: 8x either way.
  CHECK(far_precision_target(0.001, 0.01, 2000, 16000) == doctest::Approx(0.005));
  CHECK(far_precision_target(0.001, 0.01, 16000, 2000) == doctest::Approx(0.005));
  // What the arms' clocks could explain does not count: an identical compute-bound GEMM judged
  // at 1546 MHz against its baseline at 1470 MHz reads 4.3 % faster (the H200's power cap), all
  // of it clock; 5 % at a clock 1 % off counts as 4 %, whichever way.
  CHECK(far_precision_target(0.001, 0.01, 713466, 744466, 1546.0 / 1470) == 0.001);
  for (double clock : {1.01, 1 / 1.01})
    CHECK(far_precision_target(0.001, 0.03, 2000, 2100, clock) ==
          doctest::Approx((std::log(1.05) - std::log(1.03) - std::log(1.01)) / 4));

  // A 1.8 us candidate with 3 % spread against its 14.2 us baseline: stopped at +-0.5 %, on far
  // fewer samples than the +-0.1 % an A/A arm needs; the reason and the evidence say so.
  Rng rng(11);
  auto draw = [&] { return 1800 * (1 + 0.03 * rng.normal()); };
  MeasureSettings s;
  s.min_time_s = 0;
  s.max_samples = 100000;
  StoppingGoal far = kGoal;
  far.reference_ns = 14200;
  auto relaxed = make_stopping_rule(s, far);
  auto [dr, vr] = run_rule(*relaxed, draw);
  auto plain = make_stopping_rule(s, kGoal);
  auto [dp, vp] = run_rule(*plain, draw);
  REQUIRE(dr.stop);
  REQUIRE(dp.stop);
  CHECK(dr.cause == StopCause::precision);
  CHECK(vr.size() * 10 < vp.size());
  INFO(dr.reason);
  CHECK(dr.reason.find("<= 0.5% target (0.1% relaxed: the median lies far beyond the band from its "
                       "baseline's 14200 ns)") != std::string::npos);
  CHECK(relaxed->target() == doctest::Approx(0.005));
  CHECK(plain->target() == doctest::Approx(0.001));
  // Where the relaxed target is not met, the reason says so, and why it was relaxed.
  MeasureSettings few = s;
  few.max_samples = 200;
  auto capped = make_stopping_rule(few, far);
  auto [dc, vc] = run_rule(*capped, [&] { return 1800 * (1 + 0.3 * rng.normal()); });
  REQUIRE(dc.stop);
  CHECK(dc.cause == StopCause::sample_limit);
  INFO(dc.reason);
  CHECK(dc.reason.find("(target 0.5% (0.1% relaxed: the median lies far beyond the band from its "
                       "baseline's 14200 ns) not met)") != std::string::npos);
  // An explicit --median-precision is kept.
  s.median_precision = 0.001;
  auto asked = make_stopping_rule(s, far);
  auto [da, va] = run_rule(*asked, draw);
  CHECK(va.size() > 10 * vr.size());
  CHECK(asked->target() == doctest::Approx(0.001));
}

TEST_CASE("precision: a high-spread arm stops once its median is precise, far below the cap") {
  MeasureSettings s;  // the defaults: 0.1 % at a 1 % band, at most 100 000 samples
  s.min_time_s = 0;   // the rule alone: the wall-clock floor has its own case
  auto stdrel = [] {
    MeasureSettings old = stdrel_settings();
    old.min_time_s = 0.2;
    old.max_time_s = 10;
    old.max_samples = 100000;
    return old;
  }();
  SUBCASE("a sub-microsecond CPU shape: 500 ns, 12 % spread, read on a 10 ns timer tick") {
    // stdrel never meets its 0.5 % noise target and 0.2 s of 500 ns samples is 400 000 of them:
    // it runs to the cap. The median is one tick, known exactly, once the middle ranks all read it.
    Rng rng(9);
    auto draw = [&] {
      double x = 500 * std::exp(0.12 * rng.normal());
      if (rng.uniform() < 0.005) x += 50000;  // preempted
      return 10 * std::round(x / 10);
    };
    auto [ds, vs] = run_rule(*make_stopping_rule(stdrel, kGoal), draw);
    CHECK(ds.cause == StopCause::sample_limit);
    StoppingGoal ticked = kGoal;
    ticked.resolution_ns = 10;  // ties at the tick are not slow narrowing
    auto [d, v] = run_rule(*make_stopping_rule(s, ticked), draw);
    REQUIRE(d.stop);
    CHECK(d.cause == StopCause::precision);
    INFO(v.size() << " samples: " << d.reason);
    CHECK(v.size() < 10000);
    CHECK(median(v) == 500);
  }
  SUBCASE("a continuous 3 % spread with outliers") {
    // The median reaches 0.1 % after about (1.96 * 1.2533 * 3 / 0.1)^2 = 5 400 samples.
    Rng rng(10);
    auto draw = [&] {
      double x = 5000 * std::exp(0.03 * rng.normal());
      if (rng.uniform() < 0.005) x += 500000;
      return x;
    };
    auto [d, v] = run_rule(*make_stopping_rule(s, kGoal), draw);
    REQUIRE(d.stop);
    CHECK(d.cause == StopCause::precision);
    INFO(v.size() << " samples: " << d.reason);
    CHECK(v.size() > 2000);
    CHECK(v.size() < 20000);
    const auto ci = median_interval(v, 0.95);
    REQUIRE(ci);
    CHECK(ci->half_width() <= 0.001);
  }
}

TEST_CASE("precision: a median between modes stops when its interval narrows too slowly") {
  MeasureSettings s;  // the defaults: 0.1 % at a 1 % band, at most 100 000 samples, 10 s
  s.min_time_s = 0;
  SUBCASE("8 buffer sets whose medians differ by up to 15 %, as the m=1 reference GEMM's") {
    // The sets' medians of one H200 arm (us); each sample is the next set's, 1.5 % spread.
    const double sets[] = {71.0, 65.3, 71.9, 62.4, 64.5, 63.0, 70.0, 71.5};
    Rng rng(12);
    size_t i = 0;
    auto draw = [&] { return 1000 * sets[i++ % 8] * std::exp(0.011 * rng.normal()); };
    auto [d, v] = run_rule(*make_stopping_rule(s, kGoal), draw);
    REQUIRE(d.stop);
    INFO(v.size() << " samples: " << d.reason);
    CHECK(d.cause == StopCause::converged);
    CHECK(v.size() < 20000);
    CHECK(d.reason.find("per doubling of the samples, not 0.71") != std::string::npos);
    CHECK(d.reason.find("0.1% target lies beyond the arm's limits") != std::string::npos);
  }
  SUBCASE("a smooth spread narrows as 1/sqrt(n): it runs on to its target") {
    // 8 % spread: about (1.96 * 1.2533 * 8 / 0.1)^2 = 38 000 samples, within the cap.
    Rng rng(13);
    auto draw = [&] { return 5000 * std::exp(0.08 * rng.normal()); };
    auto [d, v] = run_rule(*make_stopping_rule(s, kGoal), draw);
    INFO(v.size() << " samples: " << d.reason);
    CHECK(d.cause == StopCause::precision);
    CHECK(v.size() > 20000);
  }
  SUBCASE("ties at the timer's tick, one tick wide for long, are left to resolve") {
    // A 1.7 us kernel read on a 32 ns tick, its median near a tick's edge: the interval is one
    // tick wide for thousands of samples, then a point.
    Rng rng(14);
    auto draw = [&] { return 32 * std::round((1712 + 120 * rng.normal()) / 32); };
    StoppingGoal ticked = kGoal;
    ticked.resolution_ns = 32;
    auto [d, v] = run_rule(*make_stopping_rule(s, ticked), draw);
    INFO(v.size() << " samples: " << d.reason);
    CHECK(d.cause != StopCause::converged);
  }
}

TEST_CASE("precision: where it stops, the interval holds the true median at about 95 %") {
  // Stopping on the interval's width, checked after every batch, must not cost its coverage.
  // Skewed samples (median 1000 + 50 ln 2) and a 0.5 % target, over 400 seeds.
  MeasureSettings s;
  s.median_precision = 0.005;
  const double truth = 1000 + 50 * std::log(2.0);
  int held = 0;
  std::vector<size_t> counts;
  for (int seed = 0; seed < 400; ++seed) {
    Rng rng(500 + static_cast<std::uint64_t>(seed));
    auto draw = [&] { return 1000 - 50 * std::log(rng.uniform()); };
    auto rule = make_stopping_rule(s, kGoal);
    auto [d, v] = run_rule(*rule, draw);
    REQUIRE(d.cause == StopCause::precision);
    const auto ci = median_interval(v, 0.95);
    REQUIRE(ci);
    if (ci->lo <= truth && truth <= ci->hi) ++held;
    counts.push_back(v.size());
  }
  INFO("coverage " << held / 400.0 << ", median count "
                   << median(std::vector<double>(counts.begin(), counts.end())));
  CHECK(held / 400.0 >= 0.92);
  CHECK(held / 400.0 <= 0.99);
}

TEST_CASE("precision: never before min_samples or min_time, and always at the limits") {
  MeasureSettings s;
  s.min_samples = 50;
  s.min_time_s = 0.5;
  s.max_samples = 400;
  s.max_time_s = 2;
  auto rule = make_stopping_rule(s, kGoal);
  // Identical samples: the interval is a point from 6 samples on, and still nothing stops early.
  CHECK_FALSE(rule->check(std::vector<double>(49, 1000), {0.6, 0.6}).stop);
  CHECK_FALSE(rule->check(std::vector<double>(60, 1000), {0.1, 0.1}).stop);  // wall 0.1 s < 0.5
  StopDecision d = rule->check(std::vector<double>(50, 1000), {0.1, 0.6});
  CHECK(d.stop);
  CHECK(d.cause == StopCause::precision);

  std::vector<double> wide;
  for (int i = 0; i < 400; ++i) wide.push_back(i % 2 ? 1000 : 3000);
  d = rule->check(std::vector<double>(wide.begin(), wide.begin() + 399), {0.1, 1});
  CHECK_FALSE(d.stop);
  CHECK(d.wanted == 400);  // it wants more than it has, and never more than the limit
  d = rule->check(wide, {0.1, 1});
  CHECK(d.stop);
  CHECK(d.cause == StopCause::sample_limit);
  CHECK(d.reason.find("sample limit 400 reached with the median at") != std::string::npos);
  d = rule->check(std::vector<double>(wide.begin(), wide.begin() + 100), {2, 2});
  CHECK(d.stop);
  CHECK(d.cause == StopCause::time_limit);
  // Too few samples for any interval: the limit still stops it, and says so.
  s.min_samples = 1;
  s.max_samples = 3;
  d = make_stopping_rule(s, kGoal)->check({1, 2, 3}, {});
  CHECK(d.cause == StopCause::sample_limit);
  CHECK(d.reason.find("no interval yet") != std::string::npos);
}

TEST_CASE("stop evidence: the median's interval at the decision, whichever rule decided") {
  std::vector<double> v;
  for (int i = 0; i < 101; ++i) v.push_back(1000 + i);
  auto precision = make_stopping_rule(MeasureSettings{}, kGoal);
  StopEvidence e = stop_evidence(*precision, StopCause::precision, v, kGoal);
  CHECK(e.rule == "precision");
  CHECK(e.samples == 101);
  CHECK(e.median_ns == 1050);
  CHECK(e.confidence == 0.95);
  REQUIRE(e.target);
  CHECK(*e.target == doctest::Approx(0.001));
  REQUIRE(e.interval);
  CHECK(e.interval->lo_ns < 1050);
  CHECK(e.interval->hi_ns > 1050);
  CHECK(e.interval->half_width == doctest::Approx((e.interval->hi_ns - e.interval->lo_ns) / 2100));
  StopEvidence f = stop_evidence(*make_stopping_rule(stdrel_settings(), kGoal), StopCause::noise,
                                 {1000, 1001, 1002}, kGoal);
  CHECK(f.rule == "stdrel");
  CHECK_FALSE(f.target);
  CHECK_FALSE(f.interval);  // 3 samples: too few for a 95 % interval
}

namespace {
// A timer whose samples last `ns` each and whose kernels are `kernels` (changeable mid-arm).
class ScriptedTimer final : public Timer {
 public:
  std::string name() const override { return "scripted"; }
  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    std::vector<double> out;
    for (int i = 0; i < count; ++i) {
      hooks.before(i);
      iteration();
      hooks.after(i);
      out.push_back(ns * (1 + 0.001 * (i % 3)));
    }
    ++calls;
    return out;
  }
  std::vector<std::string> kernel_names() const override { return kernels; }
  double ns = 100000;
  std::vector<std::string> kernels{"k"};
  int calls = 0;
};

// A clock that reads `mhz(sample number)` for the n-th sample it ever stamps.
class ScriptedClock final : public SampleClock {
 public:
  int peak_mhz() const override { return 2000; }
  double timer_resolution_ns() const override { return 32; }
  int capacity() const override { return 1024; }
  void reset(int) override {}
  void open(int) override {}
  void close(int) override {}
  std::vector<ClockReading> read(int count) const override {
    std::vector<ClockReading> out;
    for (int i = 0; i < count; ++i, ++stamped) {
      const double f = mhz(stamped);
      out.push_back({f, f * 1.001});
    }
    return out;
  }
  std::function<double(int)> mhz = [](int) { return 1500.0; };
  mutable int stamped = 0;
};

MeasureSettings quick() {
  MeasureSettings s;
  s.min_samples = 20;
  s.min_time_s = 0;  // below max_time_s, so that the limits can be reached
  s.max_time_s = 0.05;
  s.clock_recovery_s = 0.001;
  return s;
}
}  // namespace

TEST_CASE("sampling: every kept sample carries its clock, samples below the floor are dropped") {
  ScriptedTimer timer;
  ScriptedClock clock;
  // Every fifth sample ran at 800 MHz, under a 0.5 x 2000 MHz floor.
  clock.mhz = [](int n) { return n % 5 == 4 ? 800.0 : 1500.0; };
  int flushes = 0;
  ArmWork w{timer, [] {}, [&] { ++flushes; }, &clock};
  Measurement m;
  sample_until_stopped(w, quick(), kGoal, m);
  REQUIRE(m.samples_ns.size() >= 20);
  CHECK(m.clock.sample_mhz.size() == m.samples_ns.size());
  for (double f : m.clock.sample_mhz) CHECK(f == 1500.0);
  CHECK(m.clock.floor_mhz == 1000);
  CHECK(m.clock.peak_mhz == 2000);
  CHECK(m.clock.rejected > 0);
  CHECK(m.clock.recovery_s > 0);
  CHECK(m.stop_reason.rfind("clock-adjusted ", 0) == 0);
  CHECK(flushes > static_cast<int>(m.samples_ns.size()));  // every sample, and the re-warm ones
}

TEST_CASE("sampling: a floor never met fails the arm and names the fix") {
  ScriptedTimer timer;
  ScriptedClock clock;
  clock.mhz = [](int) { return 700.0; };
  ArmWork w{timer, [] {}, [] {}, &clock};
  Measurement m;
  CHECK_THROWS_WITH_AS(sample_until_stopped(w, quick(), kGoal, m),
                       doctest::Contains("--clock-floor"), Error);
  // With the floor off the same clock is measured, not refused.
  MeasureSettings off = quick();
  off.clock_floor = 0;
  Measurement m2;
  sample_until_stopped(w, off, kGoal, m2);
  CHECK(m2.clock.rejected == 0);
  CHECK(m2.clock.sample_mhz.front() == 700.0);
}

TEST_CASE("warm-up: batches double, but not past what the time left needs at the pace so far") {
  CHECK(next_warmup_batch(3, 3, 0.001, 0.05) == 6);         // far from the end: doubles
  CHECK(next_warmup_batch(512, 1020, 0.01, 0.05) == 1024);  // and stays within kMaxBatch
  CHECK(next_warmup_batch(1024, 2044, 0.02, 0.05) == 1024);
  // 381 iterations in 0.04 s: 0.01 s more needs 96 of them, not the 384 that doubling gives.
  CHECK(next_warmup_batch(192, 381, 0.04, 0.05) == 96);
  CHECK(next_warmup_batch(192, 381, 0.0499, 0.05) == 1);  // a sliver left: one more iteration
  CHECK(next_warmup_batch(192, 381, 0.06, 0.05) == 384);  // past the minimum: the count decides
  CHECK(next_warmup_batch(3, 0, 0, 0.05) == 6);           // no pace yet
}

TEST_CASE("sampling: a clock read above the peak discards its sample, and many fail the arm") {
  ScriptedTimer timer;
  ScriptedClock clock;
  clock.mhz = [](int n) { return n == 5 ? 2500.0 : 1500.0; };  // peak 2000
  ArmWork w{timer, [] {}, [] {}, &clock};
  Measurement m;
  sample_until_stopped(w, quick(), kGoal, m);
  CHECK(m.clock.above_peak == 1);
  CHECK(m.clock.rejected == 0);      // not the floor's discard
  CHECK(m.clock.recovery_s == 0.0);  // and no pause for the clock to recover
  CHECK(m.clock.sample_mhz.size() == m.samples_ns.size());
  for (double f : m.clock.sample_mhz) CHECK(f == 1500.0);

  // A probe that reads above the peak again and again is broken: the arm fails.
  ScriptedTimer timer2;
  ScriptedClock broken;
  broken.mhz = [](int n) { return n % 2 ? 2500.0 : 1500.0; };
  ArmWork w2{timer2, [] {}, [] {}, &broken};
  Measurement m2;
  CHECK_THROWS_WITH_AS(sample_until_stopped(w2, quick(), kGoal, m2),
                       doctest::Contains("above this GPU's 2000 MHz peak, for 3 of"), Error);
}

TEST_CASE("sampling: a kernel set that changes between batches fails the arm") {
  ScriptedTimer timer;
  ArmWork w{timer,
            [&] {
              if (timer.calls == 2) timer.kernels = {"other"};
            },
            [] {}, nullptr};
  Measurement m;
  MeasureSettings s = quick();
  s.max_noise = 1e-9;  // never stops on noise: it needs several batches
  s.stopping = "stdrel";
  CHECK_THROWS_WITH_AS(sample_until_stopped(w, s, kGoal, m),
                       doctest::Contains("set of kernels changed"), Error);
}

TEST_CASE("sampling: unclocked samples (a CPU arm) are judged as measured") {
  ScriptedTimer timer;
  ArmWork w{timer, [] {}, [] {}, nullptr};
  Measurement m;
  warm_up(w, quick(), m);
  CHECK(m.warmup_iterations >= 3);
  sample_until_stopped(w, quick(), kGoal, m);
  CHECK(m.clock.sample_mhz.empty());
  CHECK(m.clock.floor_mhz == 0);
  CHECK(m.stop_reason.rfind("clock-adjusted", 0) != 0);
  CHECK(m.kernel_names == std::vector<std::string>{"k"});
}

namespace {
// A timer whose samples are drawn from `draw`; it records the size of each batch.
class DrawingTimer final : public Timer {
 public:
  explicit DrawingTimer(std::function<double()> draw) : draw_(std::move(draw)) {}
  std::string name() const override { return "drawing"; }
  std::vector<double> measure(int count, const SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    std::vector<double> out;
    for (int i = 0; i < count; ++i) {
      hooks.before(i);
      iteration();
      hooks.after(i);
      out.push_back(draw_());
    }
    batches.push_back(count);
    return out;
  }
  std::vector<std::string> kernel_names() const override { return {"k"}; }
  std::vector<int> batches;

 private:
  std::function<double()> draw_;
};

// 1000 ns with 1 % normal spread.
DrawingTimer noisy_timer(Rng& rng) {
  return DrawingTimer([&rng] { return 1000 * (1 + 0.01 * rng.normal()); });
}
}  // namespace

TEST_CASE("sampling: the precision rule stops in a few dozen batches, with its evidence") {
  Rng rng(21);
  DrawingTimer timer = noisy_timer(rng);
  ArmWork w{timer, [] {}, [] {}, nullptr};
  Measurement m;
  MeasureSettings s;  // the defaults: precision, 0.1 % at a 1 % band
  s.min_time_s = 0;   // a fake timer's samples take no wall time to speak of
  sample_until_stopped(w, s, kGoal, m);
  REQUIRE(m.stop);
  CHECK(m.stop->cause == StopCause::precision);
  CHECK(m.stop->samples == static_cast<int>(m.samples_ns.size()));
  REQUIRE(m.stop->interval);
  CHECK(m.stop->interval->half_width <= 0.001);
  CHECK(m.stop_reason.rfind("median +-", 0) == 0);
  // The first batch is min_samples whole: no rule may stop before.
  CHECK(timer.batches.front() == s.min_samples);
  // Checks at a geometric pace: a few dozen timer calls, not one per sample.
  INFO(m.samples_ns.size() << " samples in " << timer.batches.size() << " batches");
  CHECK(timer.batches.size() < 40);
}

TEST_CASE(
    "sampling: a median between two ticks of the timer settles instead of running to the cap") {
  // Its plain median's interval would stay one tick (1.9 %) wide to the 100,000-sample limit; the
  // mid-distribution median (stats/tick_ties.hpp) reads between the ticks.
  // A 1,712 ns kernel read through a 32 ns tick at a random phase: 1,696 or 1,728 ns, half each,
  // one in seven a nanosecond off (CUPTI's conversion).
  Rng rng(8);
  DrawingTimer timer([&rng] {
    const double start = 32 * rng.uniform();
    const double u = rng.uniform();
    return 32 * (std::floor((start + 1712) / 32) - std::floor(start / 32)) + (u < 1.0 / 14    ? -1
                                                                              : u > 13.0 / 14 ? 1
                                                                                              : 0);
  });
  ScriptedClock clock;
  ArmWork w{timer, [] {}, [] {}, &clock};
  Measurement m;
  MeasureSettings s;
  s.min_time_s = 0;
  s.max_time_s = 1000;  // the sample limit, not the time, would stop it
  sample_until_stopped(w, s, kGoal, m);
  REQUIRE(m.stop);
  INFO(m.samples_ns.size() << " samples: " << m.stop_reason);
  CHECK(m.stop->cause == StopCause::precision);
  CHECK(m.samples_ns.size() < 20000);
  CHECK(m.stop->median_ns == doctest::Approx(1712).epsilon(0.001));
}

TEST_CASE("sampling: checks come at a geometric pace and close in on what the rule still wants") {
  MeasureSettings s;  // min_samples 10, max_samples 100 000
  const double f = 1.0 / 32;
  CHECK(samples_before_check(0, s, 0, f) == 10);  // min_samples whole: nothing stops before
  CHECK(samples_before_check(4, s, 0, f) == 6);
  CHECK(samples_before_check(100, s, 0, f) == 25);         // a quarter of what there is
  CHECK(samples_before_check(100, s, 110, f) == 10);       // the rule wants 10 more
  CHECK(samples_before_check(1000, s, 1001, f) == 31);     // but at least the least fraction
  CHECK(samples_before_check(1000, s, 1001, 0.2) == 200);  // which judging's cost sets
  CHECK(samples_before_check(100000, s, 0, f) == 1);       // at the limit: one, which stops it
  CHECK(samples_before_check(99990, s, 0, f) == 10);       // never past max_samples
  CHECK(samples_before_check(80000, s, 0, f) == 20000);    // many timer batches, one check

  // The least step balances judging every sample against overshooting the stopping point.
  CHECK(check_step_fraction(0, 0) == 1.0 / 32);  // nothing measured yet
  CHECK(check_step_fraction(1e-6, 60e-6) == doctest::Approx(std::sqrt(2.0 / 60)));  // a Triton arm
  CHECK(check_step_fraction(1e-7, 1e-3) == 1.0 / 32);  // a sample far dearer than judging one
  CHECK(check_step_fraction(1e-6, 1e-6) == 1.0 / 4);   // a sample as cheap as judging one

  // One timer call takes at most the timer's largest batch and ~20 ms of kernels.
  CHECK(batch_size(20000, 1024, 0) == 1024);
  CHECK(batch_size(300, 1024, 0) == 300);
  CHECK(batch_size(20000, 1024, 1e6) == 20);  // ~20 ms of 1 ms samples
  CHECK(batch_size(20000, 1024, 1e9) == 1);
  CHECK(batch_size(0, 1024, 0) == 1);
}

TEST_CASE("sampling: never more than max_samples, even when a batch would overshoot") {
  Rng rng(21);
  DrawingTimer timer = noisy_timer(rng);
  ArmWork w{timer, [] {}, [] {}, nullptr};
  Measurement m;
  MeasureSettings s;
  s.max_samples = 37;  // batches of 10, 2, 3, 3, 4, 5, 6 reach 33; the next quarter would pass 37
  SUBCASE("precision, its target never met") {
    s.median_precision = 1e-9;
  }
  SUBCASE("stdrel, which says nothing of how many it wants") {
    s.stopping = "stdrel";
    s.min_time_s = 1e9;  // its noise test never runs
  }
  sample_until_stopped(w, s, kGoal, m);
  CHECK(m.samples_ns.size() == 37);
  REQUIRE(m.stop);
  CHECK(m.stop->cause == StopCause::sample_limit);
}
