// Timer choice (worker/timer_registry.cpp): "auto" per device, a timer that cannot time the
// plugin's device refused, and an unknown timer named with the ones this build has.
#include <doctest/doctest.h>

#include "model/settings.hpp"
#include "system/error.hpp"
#include "timer.hpp"

using namespace abh;
using namespace abh::worker;

TEST_CASE("timer choice: auto is cupti on a GPU and steady on the CPU") {
  CHECK(resolve_timer("auto", true) == "cupti");
  CHECK(resolve_timer("auto", false) == "steady");
  CHECK(resolve_timer("events", true) == "events");
  CHECK(resolve_timer("cupti", true) == "cupti");
  CHECK(resolve_timer("steady", false) == "steady");
}

TEST_CASE("timer choice: a timer that cannot time the plugin's device is refused") {
  CHECK_THROWS_WITH_AS(resolve_timer("steady", true),
                       doctest::Contains("cannot time an asynchronous GPU plugin"), UsageError);
  CHECK_THROWS_WITH_AS(resolve_timer("cupti", false),
                       doctest::Contains("runs on the CPU: use steady"), UsageError);
  CHECK_THROWS_WITH_AS(resolve_timer("events", false), doctest::Contains("'events'"), UsageError);
}

TEST_CASE("timer registry: an unknown timer is refused naming the available ones") {
  CHECK(timer_names() == std::vector<std::string>{"steady"});  // no GPU timers in unit_tests
  CHECK_THROWS_WITH_AS(make_timer("sundial", TimerContext{}),
                       doctest::Contains("available: steady"), UsageError);
  CHECK(make_timer("steady", TimerContext{})->name() == "steady");
}
