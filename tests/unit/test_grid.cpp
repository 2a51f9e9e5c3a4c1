// Grid files: shape ids that cannot escape a run directory, ids derived from params, and each
// malformed grid refused with the file, the entry and the fix.
#include <doctest/doctest.h>

#include <string>

#include "model/grid.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using test::error_of;

TEST_CASE("grid: a safe name is 1-100 characters of [A-Za-z0-9._-] not starting with a dot") {
  for (const char* ok : {"m128_n4096_k4096", "fc1.fprop-bf16", "A", "x.."})
    CHECK_NOTHROW(check_safe_name(ok, "shape id"));
  const std::string fix = ": use 1-100 characters of [A-Za-z0-9._-], not starting with '.'";
  CHECK(error_of([] { check_safe_name("", "shape id"); }) == "shape id '' has a bad length" + fix);
  CHECK(error_of([] { check_safe_name(std::string(101, 'a'), "id"); }).find("has a bad length") !=
        std::string::npos);
  CHECK(error_of([] { check_safe_name("..", "shape id"); }) ==
        "shape id '..' starts with a dot" + fix);
  for (const char* bad : {"a/b", "a b", "a\\b", "ä"})
    CHECK(error_of([&] {
            check_safe_name(bad, "shape id");
          }).find("contains a character that is not allowed") != std::string::npos);
}

TEST_CASE("grid: a shape without an id gets one from m, n, k and its precision") {
  CHECK(shape_id_from_params({{"m", 1}, {"n", 2}, {"k", 3}}) == "m1_n2_k3");
  CHECK(shape_id_from_params({{"k", 3}, {"m", 1}, {"dtype", "bf16"}}) == "m1_k3_bf16");
  CHECK(shape_id_from_params({{"m", 8}, {"precision", "fp8"}}) == "m8_fp8");
  CHECK(error_of([] {
          shape_id_from_params({{"size", 4}});
        }) == "cannot derive a shape id from params {\"size\":4}: give \"id\"");
  Shape s = shape_from_json({{"params", {{"m", 4}, {"n", 5}, {"k", 6}}}, {"label", "fc1"}}, "g");
  CHECK(s.id == "m4_n5_k6");
  CHECK(s.label == "fc1");
  CHECK(to_json(s) ==
        json{{"id", "m4_n5_k6"}, {"params", {{"m", 4}, {"n", 5}, {"k", 6}}}, {"label", "fc1"}});
}

TEST_CASE("grid: a grid file round-trips and load_grid makes its errors usage errors") {
  test::TempDir tmp;
  Grid g;
  g.shapes = {Shape{"a", "", json{{"m", 1}}, ""}, Shape{"b", "attn", json{{"m", 2}}, ""}};
  const auto path = tmp.path() / "g.json";
  write_json_atomic(path, to_json(g));
  CHECK(load_grid(path).shapes == g.shapes);
  test::write(path, "{");
  CHECK_THROWS_WITH_AS(load_grid(path), doctest::Contains(("grid: " + path.string()).c_str()),
                       UsageError);
}

TEST_CASE("grid: malformed grids name the file, the entry and the fix") {
  const json shape = {{"id", "a"}, {"params", {{"m", 1}}}};
  CHECK(error_of([&] {
          grid_from_json({{"schema_version", 2}, {"shapes", {shape}}}, "g.json");
        }) ==
        "g.json: /schema_version: found integer 2, expected 1; fix: set \"schema_version\": 1 (the "
        "grid format this abharness reads)");
  CHECK(error_of([] {
          grid_from_json({{"schema_version", 1}, {"shapes", json::array()}}, "g.json");
        }) ==
        "g.json: /shapes: has 0 item(s), expected at least 1; fix: give \"shapes\" as a non-empty "
        "array of {\"id\", \"params\"} objects");
  CHECK(error_of([&] {
          grid_from_json({{"schema_version", 1}, {"shapes", {shape, shape}}}, "g.json");
        }) == "g.json: /shapes/1: duplicate shape id 'a'; fix: give each shape a unique \"id\"");
  const json escaping = {{"id", "../evil"}, {"params", {{"m", 1}}}};
  CHECK(
      error_of([&] {
        grid_from_json({{"schema_version", 1}, {"shapes", {escaping}}}, "g.json");
      })
          .rfind("g.json: /shapes/0/id: string \"../evil\" is not allowed; fix: give the shape id "
                 "1-100 characters of [A-Za-z0-9._-], not starting with '.'",
                 0) == 0);
  const json no_params = {{"id", "a"}};
  CHECK(
      error_of([&] {
        grid_from_json({{"schema_version", 1}, {"shapes", {no_params}}}, "g.json");
      }) ==
      "g.json: /shapes/0/params: missing; fix: give \"params\" as an object: the plugin's problem "
      "parameters, e.g. {\"m\": 128, \"n\": 4096, \"k\": 4096}");
}
