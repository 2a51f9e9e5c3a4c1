// The worker's CPU device (worker/device.cpp), which every CPU arm and host probe goes through.
// unit_tests compile device.cpp without ABH_WITH_CUDA (tests/CMakeLists.txt), as a worker built
// without the CUDA toolkit is.
#include <doctest/doctest.h>

#include "device.hpp"
#include "timer.hpp"

using namespace abh;
using namespace abh::worker;

TEST_CASE("device: a build without the CUDA toolkit offers the CPU and no GPU") {
  CHECK(gpu_device() == nullptr);
  const Environment e = cpu_device().probe("");
  CHECK(e == probe_host());
  CHECK_FALSE(e.gpu.has_value());
  CHECK(e.driver_version.empty());
}

TEST_CASE("device: a CPU session has no stream, no flush, no clock and no telemetry") {
  auto session = cpu_device().open("");
  REQUIRE(session);
  CHECK(session->environment() == probe_host());
  const TimerContext t = session->timer_context();
  CHECK(t.stream == nullptr);
  CHECK(t.device == -1);
  CHECK(session->l2_flush_bytes() == 0);
  CHECK(session->l2_flush_method() == "none");
  CHECK(session->sample_clock(1024) == nullptr);
  const TelemetrySnapshot s = session->telemetry();
  CHECK_FALSE(s.available);
  CHECK(s.unavailable_reason == "CPU plugin: no GPU telemetry");
  CHECK_FALSE(cpu_device().is_throttled(s));
  Telemetry both;
  both.before = both.after = s;
  const auto [throttled, note] = session->judge_throttling(both, ClockCheck{});
  CHECK_FALSE(throttled);
  CHECK(note.empty());
  session->flush_l2();
  session->synchronize();
}

TEST_CASE("device: a CPU session's context times a CPU plugin with the steady timer") {
  auto session = cpu_device().open("");
  auto timer = make_timer(resolve_timer("auto", false), session->timer_context());
  CHECK(timer->name() == "steady");
  int ran = 0;
  const std::vector<double> ns = timer->measure(3, SampleHooks{}, [&] { ++ran; });
  CHECK(ran == 3);
  REQUIRE(ns.size() == 3);
  for (double x : ns) CHECK(x >= 0);
}
