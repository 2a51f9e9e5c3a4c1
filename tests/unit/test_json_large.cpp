// Large documents written an element at a time: the text is json::dump(2) of the whole document
// and the digest Sha256 over canonical() of it, byte for byte, whatever the elements hold.
#include <doctest/doctest.h>

#include "system/json_large.hpp"

using namespace abh;

namespace {

json hostile_element(std::size_t i) {
  // Strings that look like the members being spliced, with line breaks, quotes and non-ASCII.
  return json{{"id", "s" + std::to_string(i)},
              {"label", "\n  \"rows\": []\n    {,\"x\":[]}\u00e9"},
              {"nested", {{"rows", json::array()}, {"n", i * 0.1}, {"deep", {1, 2, {{"a", {}}}}}}}};
}

std::vector<LargeArray> arrays_of(std::size_t rows, std::size_t tasks) {
  return {{"rows", rows, hostile_element}, {"tasks", tasks, [](std::size_t i) {
                                              return json{{"k", i}, {"v", json::array()}};
                                            }}};
}

json header() {
  return json{{"a", 1},
              {"rows", json::array()},
              {"b", {{"rows", json::array()}}},
              {"tasks", json::array()},
              {"digest", "x"},
              {"z", "  \"tasks\": []"}};
}

json whole(const std::vector<LargeArray>& arrays) {
  json j = header();
  for (const auto& a : arrays)
    for (std::size_t i = 0; i < a.size; ++i) j[a.key].push_back(a.element(i));
  return j;
}

}  // namespace

TEST_CASE("json_large: the spliced text is json::dump(2) of the whole document") {
  for (auto [rows, tasks] : {std::pair<std::size_t, std::size_t>{0, 0}, {1, 0}, {0, 3}, {5, 7}}) {
    CAPTURE(rows);
    CAPTURE(tasks);
    const auto arrays = arrays_of(rows, tasks);
    const json h = header();
    CHECK(splice_pretty(h, arrays, large_bodies(h, arrays)) == whole(arrays).dump(2));
  }
}

TEST_CASE("json_large: the digest is that of canonical() of the document without its skip field") {
  const auto arrays = arrays_of(4, 2);
  const json h = header();
  Sha256 streamed;
  const auto bodies = large_bodies(h, arrays, &streamed, "digest");
  json expected = whole(arrays);
  expected.erase("digest");
  CHECK(streamed.hex() == sha256_hex(canonical(expected)));
  CHECK(splice_pretty(h, arrays, bodies) == whole(arrays).dump(2));
}

TEST_CASE("json_large: an array the document does not hold as an empty member is an error") {
  const std::vector<LargeArray> arrays{{"missing", 1, hostile_element}};
  const json h = header();
  CHECK_THROWS(splice_pretty(h, arrays, large_bodies(h, arrays)));
}
