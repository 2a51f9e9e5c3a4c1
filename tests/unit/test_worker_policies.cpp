// The worker's measurement policies, without a GPU: the clock floor's arithmetic and decisions,
// the stopping rules, and the sampling loop driven by a scripted timer and clock.
#include <doctest/doctest.h>

#include <cmath>

#include "clock_guard.hpp"
#include "sampling.hpp"
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

namespace {
MeasureSettings stdrel_settings() {
  MeasureSettings s;
  s.min_samples = 10;
  s.min_time_s = 0.001;
  s.max_noise = 0.005;
  s.max_time_s = 1;
  return s;
}
}  // namespace

TEST_CASE("stdrel: stops at the noise target once the minimums are met") {
  auto rule = make_stopping_rule(stdrel_settings());
  std::vector<double> v;
  for (int i = 0; i < 9; ++i) v.push_back(1000 + (i % 3));  // 0.1 % spread
  CHECK_FALSE(rule->check(v, 0.5).stop);                    // fewer than min_samples
  v.push_back(1001);
  StopDecision d = rule->check(v, 0.5);
  CHECK(d.stop);
  CHECK(d.reason.find("<= 0.50%") != std::string::npos);
}

TEST_CASE("stdrel: a noisy arm stops once its noise has converged, and says so") {
  auto rule = make_stopping_rule(stdrel_settings());
  Rng rng(7);
  auto noise = [&] { return 1000 * (1 + 0.02 * rng.normal()); };  // 2 %: never under 0.5 %
  std::vector<double> v;
  StopDecision d;
  while (!d.stop && v.size() < 100000) {
    for (int i = 0; i < 10; ++i) v.push_back(noise());
    d = rule->check(v, 0.01);
  }
  REQUIRE(d.stop);
  CHECK(d.reason.find("converged") != std::string::npos);
  CHECK(v.size() < 2000);
}

TEST_CASE("stdrel: the time limit stops an arm that neither meets nor settles its noise") {
  auto s = stdrel_settings();
  auto rule = make_stopping_rule(s);
  std::vector<double> v;
  for (int i = 0; i < 20; ++i) v.push_back(i % 2 ? 1000 : 1500);
  StopDecision d = rule->check(v, 0.5);
  CHECK_FALSE(d.stop);
  d = rule->check(v, 1.0);
  CHECK(d.stop);
  CHECK(d.reason.find("time limit") != std::string::npos);
}

TEST_CASE("fixed: exactly min_samples, and unknown rules are refused") {
  auto s = stdrel_settings();
  s.stopping = "fixed";
  auto rule = make_stopping_rule(s);
  CHECK_FALSE(rule->check(std::vector<double>(9, 1.0), 0).stop);
  CHECK(rule->check(std::vector<double>(10, 1.0), 0).stop);
  s.stopping = "forever";
  CHECK_THROWS_WITH_AS(make_stopping_rule(s), doctest::Contains("use one of fixed, stdrel"),
                       UsageError);
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
  MeasureSettings s = stdrel_settings();
  s.min_samples = 20;
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
  sample_until_stopped(w, quick(), m);
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
  CHECK_THROWS_WITH_AS(sample_until_stopped(w, quick(), m), doctest::Contains("--clock-floor"),
                       Error);
  // With the floor off the same clock is measured, not refused.
  MeasureSettings off = quick();
  off.clock_floor = 0;
  Measurement m2;
  sample_until_stopped(w, off, m2);
  CHECK(m2.clock.rejected == 0);
  CHECK(m2.clock.sample_mhz.front() == 700.0);
}

TEST_CASE("sampling: a clock reading above the GPU's peak fails the arm") {
  ScriptedTimer timer;
  ScriptedClock clock;
  clock.mhz = [](int n) { return n == 5 ? 2500.0 : 1500.0; };  // peak 2000
  ArmWork w{timer, [] {}, [] {}, &clock};
  Measurement m;
  CHECK_THROWS_WITH_AS(sample_until_stopped(w, quick(), m), doctest::Contains("above this GPU"),
                       Error);
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
  CHECK_THROWS_WITH_AS(sample_until_stopped(w, s, m), doctest::Contains("set of kernels changed"),
                       Error);
}

TEST_CASE("sampling: unclocked samples (a CPU arm) are judged as measured") {
  ScriptedTimer timer;
  ArmWork w{timer, [] {}, [] {}, nullptr};
  Measurement m;
  warm_up(w, quick(), m);
  CHECK(m.warmup_iterations >= 3);
  sample_until_stopped(w, quick(), m);
  CHECK(m.clock.sample_mhz.empty());
  CHECK(m.clock.floor_mhz == 0);
  CHECK(m.stop_reason.rfind("clock-adjusted", 0) != 0);
  CHECK(m.kernel_names == std::vector<std::string>{"k"});
}
