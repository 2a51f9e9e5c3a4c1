// One arm's result document: the JSON mapping, the payload digest the writer seals it with, what
// result_from_json refuses (naming the field), and the fields older results may lack.
#include <doctest/doctest.h>

#include "model/result.hpp"
#include "plan_fixture.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

// The candidate arm of the fixture's first shape, with one clock reading per sample (a GPU arm).
ArmResult sample_result() {
  const Plan p = test::fixture_plan(1);
  ArmResult r = test::fixture_result(p, p.tasks[1]);
  r.measurement.clock.sample_mhz = {1500, 1490, 1510};
  r.measurement.clock.peak_mhz = 1980;
  r.measurement.cache_preparation = "flush-memset 125829120 bytes";
  r.measurement.phases = {{"start", 0.08}, {"device", 0.12}, {"sampling", 0.4}};
  return r;
}

// The written file of `r`, parsed: what a reader sees.
json written(const ArmResult& r, const test::TempDir& tmp) {
  write_result(tmp.path(), "B.json", r);
  return read_json_file(tmp.path() / "B.json");
}

std::string result_error(const json& j) {
  return test::error_of([&] { result_from_json(j, "B.json"); });
}

}  // namespace

TEST_CASE("result: the writer seals the payload with its digest and the reader gets it back") {
  test::TempDir tmp;
  json j = written(sample_result(), tmp);
  CHECK(j["payload_sha256"] == sha256_hex(canonical(payload_json(sample_result()))));
  CHECK(payload_digest(j) == j["payload_sha256"]);
  ArmResult back = read_result(tmp.path(), "B.json");
  CHECK(back.payload_sha256 == j["payload_sha256"]);
  CHECK(payload_json(back) == payload_json(sample_result()));
  CHECK(to_json(back) == j);
  CHECK(back.invocation == sample_result().invocation);
  CHECK(back.measurement.clock.sample_mhz == sample_result().measurement.clock.sample_mhz);
  CHECK(back.measurement.cache_preparation == "flush-memset 125829120 bytes");
  CHECK(back.measurement.phases == sample_result().measurement.phases);
}

TEST_CASE("result: the payload digest ignores the recorded digest and follows every other field") {
  test::TempDir tmp;
  json j = written(sample_result(), tmp);
  const std::string d = payload_digest(j);
  j["payload_sha256"] = "anything";
  CHECK(payload_digest(j) == d);
  j["pid"] = 78;
  CHECK(payload_digest(j) != d);
}

TEST_CASE("result: samples and clock readings must be positive numbers") {
  test::TempDir tmp;
  json j = written(sample_result(), tmp);
  SUBCASE("a zero sample") {
    j["measurement"]["samples_ns"][2] = 0;
    CHECK(result_error(j) ==
          "B.json.measurement: field 'samples_ns': every value must be a positive number");
  }
  SUBCASE("a string sample") {
    j["measurement"]["samples_ns"][0] = "100";
    CHECK(result_error(j) ==
          "B.json.measurement: field 'samples_ns': every value must be a positive number");
  }
  SUBCASE("samples not an array") {
    j["measurement"]["samples_ns"] = 100;
    CHECK(result_error(j) ==
          "B.json.measurement: field 'samples_ns': expected an array of numbers");
  }
  SUBCASE("a negative clock") {
    j["measurement"]["clock"]["sample_mhz"][0] = -1500;
    CHECK(result_error(j) ==
          "B.json.measurement.clock: field 'sample_mhz': every value must be a positive number");
  }
  SUBCASE("a kernel name that is not a string") {
    j["measurement"]["kernel_names"] = {1};
    CHECK(result_error(j) ==
          "B.json.measurement: field 'kernel_names[0]': expected a string, found 1");
  }
}

TEST_CASE("result: missing and ill-typed fields name where they are") {
  test::TempDir tmp;
  json j = written(sample_result(), tmp);
  SUBCASE("pid") {
    j["pid"] = "4242";
    CHECK(result_error(j) == "B.json: field 'pid': expected an integer, found string \"4242\"");
  }
  SUBCASE("invocation") {
    j["invocation"].erase("arm");
    CHECK(result_error(j) == "B.json.invocation: missing field 'arm'");
  }
  SUBCASE("correctness") {
    j["correctness"]["passed"] = 1;
    CHECK(result_error(j) ==
          "B.json.correctness: field 'passed': expected true or false, found integer 1");
  }
  SUBCASE("a phase without a name, or with negative seconds") {
    j["measurement"]["phases"][1]["name"] = "";
    CHECK(result_error(j) == "B.json.measurement.phases[1]: a phase needs a name and seconds >= 0");
    j["measurement"]["phases"][1] = {{"name", "device"}, {"seconds", -0.5}};
    CHECK(result_error(j) == "B.json.measurement.phases[1]: a phase needs a name and seconds >= 0");
    j["measurement"]["phases"] = "device";
    CHECK(result_error(j) == "B.json.measurement.phases: expected an array of {name, seconds}");
  }
  SUBCASE("a source identity edited without its digest") {
    j["source"]["commit"] = std::string(40, 'd');
    CHECK(result_error(j).rfind("B.json.source: field 'digest': does not match", 0) == 0);
  }
}

TEST_CASE(
    "result: results written before clocks, tactic choices, cache preparations and phases still "
    "read") {
  test::TempDir tmp;
  json j = written(sample_result(), tmp);
  j["measurement"].erase("clock");
  j["measurement"].erase("tactic_choice");
  j["measurement"].erase("cache_preparation");
  j["measurement"].erase("phases");
  ArmResult r = result_from_json(j, "B.json");
  CHECK(r.measurement.cache_preparation.empty());
  CHECK(r.measurement.phases.empty());
  CHECK(r.measurement.clock.sample_mhz.empty());
  CHECK(r.measurement.clock.peak_mhz == 0);
  CHECK(r.measurement.tactic_choice.empty());
}

namespace {
// A result with the precision rule's evidence, as the worker records it.
ArmResult with_evidence() {
  ArmResult r = sample_result();
  r.measurement.stop = StopEvidence{"precision", StopCause::precision,
                                    3,           1001.5,
                                    0.95,        MedianPrecision{1000, 1002.25, 0.00062, 1.25},
                                    0.001};
  return r;
}
}  // namespace

TEST_CASE("result: the stopping rule's evidence round-trips, and an unknown cause is refused") {
  test::TempDir tmp;
  json j = written(with_evidence(), tmp);
  CHECK(j["measurement"]["stop"]["cause"] == "precision");
  CHECK(j["measurement"]["stop"]["interval"]["hi_ns"] == 1002.25);
  ArmResult back = result_from_json(j, "B.json");
  REQUIRE(back.measurement.stop);
  CHECK(*back.measurement.stop == *with_evidence().measurement.stop);
  CHECK(payload_json(back) == payload_json(with_evidence()));

  // The other rules have no target, and too few samples no interval: both read back as absent.
  ArmResult fixed = with_evidence();
  fixed.measurement.stop->rule = "fixed";
  fixed.measurement.stop->cause = StopCause::fixed;
  fixed.measurement.stop->interval.reset();
  fixed.measurement.stop->target.reset();
  json f = written(fixed, tmp);
  CHECK(f["measurement"]["stop"]["interval"].is_null());
  CHECK(f["measurement"]["stop"]["target"].is_null());
  CHECK(*result_from_json(f, "B.json").measurement.stop == *fixed.measurement.stop);

  j["measurement"]["stop"]["cause"] = "boredom";
  CHECK(result_error(j) ==
        "B.json.measurement.stop: field 'cause': 'boredom' is not one of precision, noise, "
        "converged, fixed, sample_limit, time_limit, clock_floor");
  j["measurement"]["stop"]["cause"] = "precision";
  j["measurement"]["stop"].erase("target");
  CHECK(result_error(j) == "B.json.measurement.stop: missing field 'target'");
}

TEST_CASE("result: results written before the stopping evidence was recorded still read") {
  test::TempDir tmp;
  json j = written(with_evidence(), tmp);
  j["measurement"].erase("stop");
  CHECK_FALSE(result_from_json(j, "B.json").measurement.stop);
  // And a result without evidence writes none: its payload, and so its digest, is unchanged.
  CHECK_FALSE(payload_json(sample_result())["measurement"].contains("stop"));
}

TEST_CASE("result: how many processes held a context on the GPU is recorded when NVML tells") {
  test::TempDir tmp;
  ArmResult r = sample_result();
  r.telemetry.before.compute_processes = 1;
  r.telemetry.after.compute_processes = 2;
  json j = written(r, tmp);
  CHECK(j["telemetry"]["before"]["compute_processes"] == 1);
  const ArmResult back = read_result(tmp.path(), "B.json");
  CHECK(back.telemetry.before.compute_processes == 1);
  CHECK(back.telemetry.after.compute_processes == 2);
  // Unknown (a CPU arm, or no NVML query) writes nothing: older results read, digests unchanged.
  CHECK_FALSE(payload_json(sample_result())["telemetry"]["before"].contains("compute_processes"));
  CHECK(
      result_from_json(written(sample_result(), tmp), "B.json").telemetry.after.compute_processes ==
      -1);
}
