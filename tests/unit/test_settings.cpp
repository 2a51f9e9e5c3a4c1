// Measurement settings: the JSON mapping (plans written before the clock check read as measured
// without it, those before the precision rule without its target), and each out-of-range value
// refused with the flag that sets it.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "model/settings.hpp"
#include "system/error.hpp"

using namespace abh;

TEST_CASE("settings: JSON round-trips and old plans read with the clock check off") {
  MeasureSettings s;
  s.timer = "cupti";
  s.max_noise = 0.002;
  s.warm_l2 = true;
  s.clock_floor = 0.97;
  s.median_precision = 0.0005;
  CHECK(measure_settings_from_json(to_json(s), "plan.json") == s);
  json old = to_json(s);
  old.erase("clock_floor");
  old.erase("clock_recovery_s");
  old.erase("median_precision");
  MeasureSettings back = measure_settings_from_json(old, "plan.json");
  CHECK(back.clock_floor == 0);
  CHECK(back.clock_recovery_s == 0);
  CHECK(back.median_precision == 0);  // plans before the precision rule did not use it
  json typed = to_json(s);
  typed["min_samples"] = 2.5;
  CHECK_THROWS_WITH_AS(measure_settings_from_json(typed, "plan.json.settings"),
                       "plan.json.settings: field 'min_samples': expected an integer, found "
                       "number 2.5",
                       Error);
}

TEST_CASE("settings: the defaults are valid and every bad value names its flag") {
  CHECK_NOTHROW(validate(MeasureSettings{}));
  struct Bad {
    std::function<void(MeasureSettings&)> set;
    std::string flag;
  };
  const std::vector<Bad> bad = {
      {[](MeasureSettings& s) { s.timer = "rdtsc"; }, "--timer 'rdtsc'"},
      {[](MeasureSettings& s) { s.stopping = "never"; }, "--stopping 'never'"},
      {[](MeasureSettings& s) { s.warmup_iterations = -1; }, "--warmup"},
      {[](MeasureSettings& s) { s.min_samples = 0; }, "--min-samples"},
      {[](MeasureSettings& s) { s.max_samples = 5; }, "--max-samples must be >= --min-samples"},
      {[](MeasureSettings& s) { s.min_time_s = -1; }, "--min-time"},
      {[](MeasureSettings& s) { s.max_noise = 1; }, "--max-noise"},
      {[](MeasureSettings& s) { s.median_precision = -0.001; }, "--median-precision"},
      {[](MeasureSettings& s) { s.median_precision = 1; }, "--median-precision"},
      {[](MeasureSettings& s) { s.median_precision = std::nan(""); }, "--median-precision"},
      {[](MeasureSettings& s) { s.max_time_s = 0; }, "--max-time"},
      {[](MeasureSettings& s) { s.arm_timeout_s = 0; }, "--arm-timeout"},
      {[](MeasureSettings& s) { s.tactic.clear(); }, "--tactic"},
      {[](MeasureSettings& s) { s.clock_floor = 1; }, "--clock-floor"},
      {[](MeasureSettings& s) { s.clock_recovery_s = 11; }, "--clock-recovery"},
  };
  for (const auto& b : bad) {
    MeasureSettings s;
    b.set(s);
    CAPTURE(b.flag);
    CHECK_THROWS_WITH_AS(validate(s), doctest::Contains(b.flag.c_str()), UsageError);
  }
}
