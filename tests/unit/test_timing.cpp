// What is timed (core/model/timing.cpp): the --timing list, the plan's shapes as grid shapes x
// timings, the settings of one arm, plan shape ids and the timings a CPU plugin is refused.
#include <doctest/doctest.h>

#include "model/timing.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using test::error_of;

TEST_CASE("timing: --timing is a comma list of kernel, graph and launch, each once") {
  CHECK(parse_timings("kernel") == std::vector<std::string>{"kernel"});
  CHECK(parse_timings("graph,kernel,launch") ==
        std::vector<std::string>{"graph", "kernel", "launch"});
  for (const char* bad : {"", "kernels", "kernel,", ",graph", "kernel,,graph", "kernel,kernel",
                          "Kernel", "kernel graph"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_timings(bad), doctest::Contains("--timing"), UsageError);
  }
  CHECK(error_of([] { parse_timings("kernel,kernel"); }).find("'kernel' is named twice") !=
        std::string::npos);
  CHECK(error_of([] { parse_timings("kernel,"); }).find("ends with a comma that names no timing") !=
        std::string::npos);
  CHECK(error_of([] { parse_timings(""); }).find("'' names no timing") != std::string::npos);
  CHECK(error_of([] { parse_timings("wall"); }).find("use one or more of kernel, graph, launch") !=
        std::string::npos);
}

TEST_CASE("timing: one timing keeps the grid's ids, several give <shape>@<timing> per shape") {
  const std::vector<Shape> grid = {Shape{"m1", "fc1", json{{"m", 1}}, ""},
                                   Shape{"m8", "", json{{"m", 8}}, ""}};
  const std::vector<Shape> one = expand_timings(grid, {"graph"});
  REQUIRE(one.size() == 2);
  CHECK(one[0].id == "m1");
  CHECK(one[0].timing == "graph");
  CHECK(one[0].label == "fc1");
  CHECK(one[1].params == json{{"m", 8}});
  const std::vector<Shape> three = expand_timings(grid, {"kernel", "graph", "launch"});
  std::vector<std::string> ids, timings;
  for (const Shape& s : three) ids.push_back(s.id), timings.push_back(s.timing);
  CHECK(ids == std::vector<std::string>{"m1@kernel", "m1@graph", "m1@launch", "m8@kernel",
                                        "m8@graph", "m8@launch"});
  CHECK(timings ==
        std::vector<std::string>{"kernel", "graph", "launch", "kernel", "graph", "launch"});
  CHECK(three[4].params == json{{"m", 8}});
}

TEST_CASE("timing: an arm measures under the plan's settings with its shape's one timing") {
  MeasureSettings plan;
  plan.timing = "kernel,launch";
  plan.max_noise = 0.01;
  const MeasureSettings arm = arm_settings(plan, Shape{"m1@launch", "", json::object(), "launch"});
  CHECK(arm.timing == "launch");
  CHECK(arm.max_noise == 0.01);
  // A shape of a plan written before timings were recorded timed kernels.
  CHECK(arm_settings(plan, Shape{"m1", "", json::object(), ""}).timing == "kernel");
  CHECK(shape_timing(Shape{"m1", "", json::object(), ""}) == "kernel");
}

TEST_CASE("timing: a plan shape id is a grid id, optionally @ a known timing") {
  for (const char* ok : {"m1", "m1@kernel", "m1_n2@graph", "x.y@launch"})
    CHECK_NOTHROW(check_plan_shape_id(ok, "shape"));
  CHECK(error_of([] { check_plan_shape_id("m1@wall", "shape"); }) ==
        "shape 'm1@wall' ends in '@wall', which is not a timing (kernel, graph, launch)");
  CHECK(error_of([] {
          check_plan_shape_id("a/x@graph", "shape");
        }).find("contains a character that is not allowed") != std::string::npos);
  CHECK(error_of([] { check_plan_shape_id("@graph", "shape"); }).find("bad length") !=
        std::string::npos);
}

TEST_CASE("timing: graph and launch time GPU work, a CPU plugin gets the kernel timing only") {
  CHECK(timing_refusal("kernel", false, "cpu-gemm").empty());
  CHECK(timing_refusal("graph", true, "spin").empty());
  CHECK(timing_refusal("launch", true, "spin").empty());
  const std::string why = timing_refusal("launch", false, "cpu-gemm");
  CHECK(why.find("timing 'launch'") != std::string::npos);
  CHECK(why.find("cpu-gemm plugin runs on the CPU") != std::string::npos);
  CHECK(why.find("use --timing kernel") != std::string::npos);
  CHECK(timing_refusal("graph", false, "x").find("a replayed CUDA graph") != std::string::npos);
  // The first timing of a list that a CPU plugin cannot be timed by, as the planner refuses it.
  CHECK_FALSE(first_gpu_timing("kernel"));
  CHECK(first_gpu_timing("kernel,launch,graph") == "launch");
  CHECK(first_gpu_timing("graph") == "graph");
}

TEST_CASE("timing: every timing says what it answers") {
  for (const std::string& t : timing_names()) CHECK(timing_meaning(t) != "unknown timing");
  CHECK(timing_meaning("launch").find("host time") != std::string::npos);
}
