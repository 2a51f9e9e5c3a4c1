// Text helpers shared by error messages and renderers.
#include <doctest/doctest.h>

#include "system/text.hpp"

using namespace abh;

TEST_CASE("text: join puts the separator between every two items") {
  CHECK(join({}, ", ") == "");
  CHECK(join({"a"}, ", ") == "a");
  CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(join({"x", "y"}, "<br>") == "x<br>y");
  // Empty items keep their place: a CSV row with an empty first field still has all its commas.
  CHECK(join({"", "b", ""}, ",") == ",b,");
}
