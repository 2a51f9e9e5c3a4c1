// report.json: the JSON mapping round-trips, satisfies schemas/report.schema.json, and refuses a
// damaged or foreign document with the field named.
#include <doctest/doctest.h>

#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

TEST_CASE("report: JSON round-trips and satisfies the schema") {
  Report r = sample_report();
  check_round_trip(r);
  json j = to_json(r);
  // The validator itself notices a missing required key and a wrong type.
  json broken = j;
  broken["shapes"][0].erase("drift");
  broken["summary"]["improved"] = "one";
  CHECK(schema_errors(broken).size() == 2);

  json wrong_version = j;
  wrong_version["schema_version"] = 99;
  CHECK_THROWS_AS(report_from_json(wrong_version, "report.json"), Error);
  json no_summary = j;
  no_summary.erase("summary");
  CHECK_THROWS_WITH_AS(report_from_json(no_summary, "report.json"), doctest::Contains("summary"),
                       Error);
  json bad_verdict = j;
  bad_verdict["shapes"][0]["verdict"] = "better";
  CHECK_THROWS_WITH_AS(report_from_json(bad_verdict, "report.json"), doctest::Contains("shapes[0]"),
                       Error);
}
