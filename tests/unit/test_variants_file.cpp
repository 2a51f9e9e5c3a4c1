// The variants file (model/variants_file.hpp): what it reads, and an error naming the file, the
// variant, the field and the fix for each way it can be wrong.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/variants_file.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using abh::test::contains;

namespace {

json three_variants() {
  return json::parse(R"({"schema_version": 1, "baseline": "o2", "variants": [
      {"name": "pr", "revision": "my-branch", "build": {"OPT": "-O3"}, "run": {"tactic": "default"}},
      {"name": "o2", "revision": "main", "build": {"OPT": "-O2"}},
      {"name": "o3", "revision": "main", "build": {"OPT": "-O3"}}]})");
}

std::string usage_error(const json& j) {
  try {
    variants_file_from_json(j, "v.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("variants file: read, mapped back to JSON, the baseline ordered first") {
  const VariantsFile f = variants_file_from_json(three_variants(), "v.json");
  CHECK(f.baseline == "o2");
  REQUIRE(f.variants.size() == 3);
  CHECK(f.variants[0].build.at("OPT") == "-O3");
  CHECK(f.variants[0].run == json{{"tactic", "default"}});
  CHECK(f.variants[1].run.empty());
  CHECK(variants_file_from_json(to_json(f), "again") == f);
  const auto ordered = ordered_variants(f);
  CHECK(ordered[0].name == "o2");
  CHECK(ordered[1].name == "pr");
  CHECK(ordered[2].name == "o3");
  CHECK_FALSE(is_two_variant_shorthand(ordered));
  CHECK(is_two_variant_shorthand(ordered_variants(two_variant_file("HEAD~1", "HEAD"))));
}

TEST_CASE("variants file: each mistake names the file, the variant, the field and the fix") {
  json j = three_variants();
  SUBCASE("an unknown field of a variant") {
    j["variants"][1]["buidl"] = json::object();
    const std::string e = usage_error(j);
    CHECK(contains(e, "v.json"));
    CHECK(contains(e, "/variants/1"));
    CHECK(contains(e, "buidl"));
  }
  SUBCASE("two variants of one name") {
    j["variants"][2]["name"] = "o2";
    const std::string e = usage_error(j);
    CHECK(contains(e, "/variants/2 (o2)"));
    CHECK(contains(e, "field 'name'"));
    CHECK(contains(e, "unique"));
  }
  SUBCASE("a baseline that is not a variant") {
    j["baseline"] = "o1";
    const std::string e = usage_error(j);
    CHECK(contains(e, "field 'baseline'"));
    CHECK(contains(e, "'o1' is not one of the variants (o2, o3, pr)"));
  }
  SUBCASE("fewer than two variants") {
    j["variants"].erase(1);
    j["variants"].erase(1);
    j["baseline"] = "pr";
    const std::string e = usage_error(j);
    CHECK(contains(e, "/variants"));
    CHECK(contains(e, "2 to 16 variants"));
  }
  SUBCASE("a name that cannot be a path component") {
    j["variants"][0]["name"] = "../pr";
    const std::string e = usage_error(j);
    CHECK(contains(e, "/variants/0/name"));
    CHECK(contains(e, "[A-Za-z0-9_-]"));
  }
  SUBCASE("a build setting that is not a string") {
    j["variants"][0]["build"]["OPT"] = 3;
    CHECK(contains(usage_error(j), "/variants/0/build/OPT"));
  }
  SUBCASE("a run setting that is not an object") {
    j["variants"][0]["run"] = "default";
    CHECK(contains(usage_error(j), "/variants/0/run"));
  }
}

TEST_CASE("variants file: a variant name is checked where it is used as a path component") {
  CHECK_NOTHROW(check_variant_name("o3-tuned_2", "here"));
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "a.b", "3x", "a/b", std::string(33, 'a')})
    CHECK_THROWS_AS(check_variant_name(bad, "here"), UsageError);
}
