// Typed reading of JSON documents: every refusal names the document, the field and what was
// expected, because that message is all a user sees of a damaged or hand-edited file.
#include <doctest/doctest.h>

#include "system/error.hpp"
#include "system/json_io.hpp"

using namespace abh;

TEST_CASE("json_io: string_array reads strings and names the field or item that is not one") {
  const json j = json::parse(R"({"argv": ["cc", "-O2"], "empty": [], "mixed": ["a", 5],
                                 "text": "cc", "deep": [{"a": "0123456789012345678901234567890123456789"}]})");
  CHECK(string_array(j, "argv", "m.json") == std::vector<std::string>{"cc", "-O2"});
  CHECK(string_array(j, "empty", "m.json").empty());
  CHECK_THROWS_WITH_AS(string_array(j, "missing", "m.json"),
                       "m.json: field 'missing': expected an array of strings", Error);
  CHECK_THROWS_WITH_AS(string_array(j, "text", "m.json"),
                       "m.json: field 'text': expected an array of strings", Error);
  CHECK_THROWS_WITH_AS(string_array(j, "mixed", "m.json"),
                       "m.json: field 'mixed[1]': expected a string, found 5", Error);
  // A large item is cut short in the message.
  CHECK_THROWS_WITH_AS(string_array(j, "deep", "m.json"),
                       "m.json: field 'deep[0]': expected a string, found "
                       "{\"a\":\"0123456789012345678901234567890...",
                       Error);
  CHECK_THROWS_WITH_AS(string_array(json::array(), "argv", "m.json"),
                       doctest::Contains("m.json: expected a JSON object"), Error);
}

TEST_CASE("json_io: array_field and object_field refuse a missing or mistyped field") {
  const json j = json::parse(R"({"list": [1, 2], "obj": {"k": 1}})");
  CHECK(array_field(j, "list", "p.json").size() == 2);
  CHECK(object_field(j, "obj", "p.json").at("k") == 1);
  CHECK_THROWS_WITH_AS(array_field(j, "tasks", "p.json"), "p.json: missing field 'tasks'", Error);
  CHECK_THROWS_WITH_AS(array_field(j, "obj", "p.json"), "p.json: field 'obj': expected an array",
                       Error);
  CHECK_THROWS_WITH_AS(object_field(j, "list", "p.json"),
                       doctest::Contains("p.json: field 'list': expected an object"), Error);
}

TEST_CASE("json_io: schema_version accepts the expected version and says how to fix another") {
  CHECK(schema_version(json{{"schema_version", 1}}, "plan.json", 1, "plan") == 1);
  CHECK_THROWS_WITH_AS(
      schema_version(json{{"schema_version", 2}}, "plan.json", 1, "plan", "re-run the sweep"),
      "plan.json: field 'schema_version': found 2, this abharness reads plan "
      "schema 1: re-run the sweep",
      Error);
  CHECK_THROWS_WITH_AS(
      schema_version(json{{"schema_version", 0}}, "g.json", 1, "grid"),
      "g.json: field 'schema_version': found 0, this abharness reads grid schema 1", Error);
  CHECK_THROWS_WITH_AS(schema_version(json{{"schema_version", "1"}}, "g.json", 1, "grid"),
                       doctest::Contains("field 'schema_version': expected an integer"), Error);
  CHECK_THROWS_WITH_AS(schema_version(json::object(), "g.json", 1, "grid"),
                       "g.json: missing field 'schema_version'", Error);
}
