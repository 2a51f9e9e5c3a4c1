// The tidy CSV (docs/csv.md): one row per shape and one per arm, the same fixed columns for every
// run, the shape's parameters as columns, so that the files of two runs stack under one header.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE_MESSAGE(it != header.end(), "no column " << name);
  return static_cast<std::size_t>(it - header.begin());
}

}  // namespace

TEST_CASE("tidy csv: one row per shape and per arm, every value in its own column") {
  const Report r = sample_report();
  const auto rows = parse_csv(render(r, "tidy-csv", {}));
  const auto& head = rows[0];
  std::vector<std::string> expected = tidy_csv_columns();
  for (const char* p : {"k", "m", "n"}) expected.push_back(p);  // the parameters, sorted
  CHECK(head == expected);
  std::size_t arms = 0;
  for (const auto& s : r.shapes) arms += s.arms.size();
  REQUIRE(rows.size() == 1 + r.shapes.size() + arms);
  for (const auto& row : rows) CHECK(row.size() == head.size());

  const auto kind = column(head, "row"), arm = column(head, "arm"), shape = column(head, "shape");
  // Shape 0's rows: the shape, then A1, B, A2, each with its parameters and the run's identity.
  CHECK(rows[1][kind] == "shape");
  CHECK(rows[1][shape] == r.shapes[0].shape);
  CHECK(std::stod(rows[1][column(head, "speedup")]) == *r.shapes[0].speedup);
  CHECK(rows[1][column(head, "median_ns")].empty());
  CHECK(rows[1][column(head, "label")] == kAwkwardLabel);
  for (int i = 0; i < 3; ++i) {
    const auto& a = rows[2 + static_cast<std::size_t>(i)];
    CHECK(a[kind] == "arm");
    CHECK(a[arm] == r.shapes[0].arms[static_cast<std::size_t>(i)].arm);
    CHECK(std::stod(a[column(head, "median_ns")]) ==
          r.shapes[0].arms[static_cast<std::size_t>(i)].median_ns);
    CHECK(a[column(head, "speedup")].empty());
    CHECK(a[column(head, "m")] == "128");
    CHECK(a[column(head, "n")] == "4096");
    CHECK(a[column(head, "run_id")] == r.provenance.run_id);
    CHECK(a[column(head, "candidate_commit")] == std::string(40, 'b'));
    CHECK(a[column(head, "candidate_name")] == "candidate");  // a two-variant run's only one
  }
  // The failed arm (shape 3, A2) says why, and has no times.
  bool failed = false;
  for (const auto& row : rows)
    if (row[kind] == "arm" && row[shape] == r.shapes[3].shape && row[arm] == "A2") {
      failed = true;
      CHECK(row[column(head, "failure")].find("worker crashed") != std::string::npos);
      CHECK(row[column(head, "median_ns")].empty());
    }
  CHECK(failed);
}

TEST_CASE("tidy csv: two runs, different schedules, stack under one header") {
  Plan aba = make_plan(4), abba = make_plan(4, "abba");
  abba.run_id = "20260102-000000-efgh";
  const auto a = parse_csv(
      render(build_report(aba, make_outcomes(aba), StatsOptions{}, "d1"), "tidy-csv", {}));
  const auto b = parse_csv(
      render(build_report(abba, make_outcomes(abba), StatsOptions{}, "d2"), "tidy-csv", {}));
  CHECK(a[0] == b[0]);  // the wide CSV's header differs: A1_*, B_*, A2_* against A1_*, B1_*, ...
  CHECK(parse_csv(
            render(build_report(aba, make_outcomes(aba), StatsOptions{}, "d1"), "csv", {}))[0] !=
        parse_csv(
            render(build_report(abba, make_outcomes(abba), StatsOptions{}, "d2"), "csv", {}))[0]);
  std::set<std::string> arms;
  for (const auto& row : b)
    if (row[column(b[0], "row")] == "arm") arms.insert(row[column(b[0], "arm")]);
  CHECK(arms.size() == 4);  // A1, B1, B2, A2
}

TEST_CASE("tidy csv: a parameter named like a fixed column gets a param_ prefix") {
  Report r = sample_report();
  for (auto& s : r.shapes) s.params["verdict"] = "x";
  const auto rows = parse_csv(render(r, "tidy-csv", {}));
  CHECK(std::count(rows[0].begin(), rows[0].end(), "verdict") == 1);
  CHECK(rows[1][column(rows[0], "param_verdict")] == "x");
  CHECK(rows[1][column(rows[0], "verdict")] == to_string(r.shapes[0].verdict));
}

TEST_CASE("tidy csv: docs/csv.md describes every fixed column, in order") {
  std::ifstream in(std::filesystem::path(ABH_SOURCE_DIR) / "docs/csv.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const auto from = all.find("\n## report.tidy.csv");
  REQUIRE(from != std::string::npos);
  const std::string doc = all.substr(from, all.find("\n## ", from + 1) - from);
  std::vector<std::string> documented;
  const std::regex row(R"re(\n\| `([a-z_]+)` \|)re");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator();
       ++it)
    documented.push_back((*it)[1]);
  CHECK(documented == tidy_csv_columns());
}
