// `run --shapes`: ids and fnmatch patterns choose grid shapes in grid order, and a pattern that
// matches nothing is a usage error naming it, never a silently smaller run.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/shape_filter.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using test::error_of;

namespace {

std::vector<Shape> grid_of(const std::vector<std::string>& ids) {
  std::vector<Shape> shapes;
  for (const auto& id : ids) shapes.push_back(Shape{id, "", json{{"id", id}}, ""});
  return shapes;
}

std::vector<std::string> ids_of(const std::vector<Shape>& shapes) {
  std::vector<std::string> ids;
  for (const auto& s : shapes) ids.push_back(s.id);
  return ids;
}

}  // namespace

TEST_CASE("shape filter: the patterns are split on commas and an empty one is refused") {
  CHECK(parse_shape_filter("").empty());
  CHECK(parse_shape_filter("m1_*") == std::vector<std::string>{"m1_*"});
  CHECK(parse_shape_filter("m1_*,m4096_n6656_k19968_bf16") ==
        std::vector<std::string>{"m1_*", "m4096_n6656_k19968_bf16"});
  for (const char* bad : {"a,,b", "a,", ",a", ","}) {
    const std::string e = error_of([&] { parse_shape_filter(bad); });
    CHECK(e.find("--shapes") == 0);
    CHECK(e.find("empty pattern") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_shape_filter("a,"), UsageError);
}

TEST_CASE("shape filter: an id matches itself and fnmatch wildcards match as in a shell") {
  CHECK(shape_matches("m1_n2_k3", "m1_n2_k3"));
  CHECK_FALSE(shape_matches("m1_n2_k3", "m1_n2_k"));
  CHECK_FALSE(shape_matches("m11_n2_k3", "m1_n2_k3"));
  CHECK(shape_matches("m1_n2_k3", "m1_*"));
  CHECK_FALSE(shape_matches("m16_n2_k3", "m1_*"));
  CHECK(shape_matches("m16_n2_k3", "m1?_*"));
  CHECK(shape_matches("m4096_n6656_k19968_bf16", "*_bf16"));
  CHECK(shape_matches("fc1.fprop", "fc1*"));  // '*' matches a dot: ids are not file names
  CHECK(shape_matches("m2_n2", "m[12]_*"));
  CHECK_FALSE(shape_matches("m3_n2", "m[12]_*"));
  CHECK_FALSE(shape_matches("M1_n2_k3", "m1_*"));  // case matters, as in the result directories
}

TEST_CASE("shape filter: the matching shapes are kept in the grid's order, each once") {
  const auto g = grid_of({"m1_n8_k8", "m64_n8_k8", "m1_n16_k16", "m4096_n6656_k19968_bf16"});
  CHECK(ids_of(filter_shapes(g, {}, "g.json")) == ids_of(g));
  CHECK(ids_of(filter_shapes(g, {"m4096_n6656_k19968_bf16", "m1_*"}, "g.json")) ==
        std::vector<std::string>{"m1_n8_k8", "m1_n16_k16", "m4096_n6656_k19968_bf16"});
  CHECK(ids_of(filter_shapes(g, {"m1_*", "*_k8"}, "g.json")) ==
        std::vector<std::string>{"m1_n8_k8", "m64_n8_k8", "m1_n16_k16"});
  const auto kept = filter_shapes(g, {"m64_*"}, "g.json");
  REQUIRE(kept.size() == 1);
  CHECK(kept[0] == g[1]);  // params and all
}

TEST_CASE("shape filter: a pattern matching no shape is a usage error naming it and some ids") {
  const auto g = grid_of({"a1", "a2", "a3", "a4", "a5", "a6", "a7"});
  CHECK_THROWS_AS(filter_shapes(g, {"b*"}, "g.json"), UsageError);
  const std::string none = error_of([&] { filter_shapes(g, {"b*"}, "g.json"); });
  CHECK(none ==
        "--shapes 'b*': pattern 'b*' matches no shape of the grid 'g.json' (its ids: a1, "
        "a2, a3, a4, a5 and 2 more); give shape ids or fnmatch patterns such as m1_*");
  // One typo among patterns that match: still refused, and only the typo is named.
  const std::string typo = error_of([&] { filter_shapes(g, {"a1", "a9", "a*", "c"}, "g.json"); });
  CHECK(typo.find("--shapes 'a1,a9,a*,c': patterns 'a9', 'c' match no shape") == 0);
  CHECK(typo.find("'a1'") == std::string::npos);
  const std::string few = error_of([&] { filter_shapes(grid_of({"x"}), {"y"}, "g.json"); });
  CHECK(few.find("(its ids: x)") != std::string::npos);
}
