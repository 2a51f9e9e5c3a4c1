// A comparison across runs: shapes matched by id (a shape missing from a run is shown as such),
// each run's own speedup, interval and times, what differs between the runs besides machine and
// time, one JSON mapping that round-trips and matches schemas/compare.schema.json, and renderings
// titled as a comparison across runs.
#include <doctest/doctest.h>

#include "report/comparison.hpp"
#include "report/text_table.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

// Two runs: the sample report (4 shapes, one failed) and the same revisions measured "on another
// machine" with one shape fewer and a run of its own.
std::vector<RunToCompare> two_runs() {
  Report a = sample_report();
  Plan p = make_plan(3);
  p.run_id = "20260108-000000-h200";
  p.machine[0].gpu->name = "NVIDIA H200 NVL";
  Report b = build_report(p, make_outcomes(p), StatsOptions{}, "sha256:" + std::string(64, 's'));
  return {{a, "runs/a"}, {b, "elsewhere/b"}};
}

}  // namespace

TEST_CASE("comparison: shapes are matched by id across runs") {
  const auto runs = two_runs();
  Comparison c = build_comparison(runs);
  REQUIRE(c.runs.size() == 2);
  CHECK(c.runs[0].run_id == "20260101-000000-abcd");
  CHECK(c.runs[1].run_id == "20260108-000000-h200");
  CHECK(c.runs[1].machines ==
        std::vector<std::string>{"host: NVIDIA H200 NVL GPU-1234, driver 580.00"});
  CHECK(c.runs[0].geomean == runs[0].report.summary.geomean);
  REQUIRE(c.shapes.size() == 4);
  for (std::size_t s = 0; s < 3; ++s) {
    CHECK(c.shapes[s].shape == runs[0].report.shapes[s].shape);
    for (std::size_t r = 0; r < 2; ++r) {
      const ComparedCell& cell = c.shapes[s].runs[r];
      REQUIRE(cell);
      CHECK(*cell == static_cast<const ShapeEstimate&>(runs[r].report.shapes[s]));
      CHECK(cell->speedup == runs[r].report.shapes[s].speedup);
      CHECK(cell->ci == runs[r].report.shapes[s].ci);
    }
  }
  REQUIRE(c.shapes[3].runs[0]);
  CHECK(c.shapes[3].runs[0]->verdict == Verdict::failed);
  CHECK(c.shapes[3].runs[0]->failure == runs[0].report.shapes[3].failure);
  CHECK_FALSE(c.shapes[3].runs[1]);
  CHECK(c.notes == std::vector<std::string>{
                       "1 of 4 shape(s) are missing from some run (shown as \"not in run\")"});
  CHECK_THROWS_AS(build_comparison({runs[0]}), UsageError);
}

TEST_CASE("comparison: runs of different revisions are said to be so") {
  auto runs = two_runs();
  runs[1].report.provenance.variants[1].source.requested = "feature-x";
  Comparison c = build_comparison(runs);
  REQUIRE(c.notes.size() == 2);
  CHECK(c.notes[0].rfind("the runs compare different candidate revisions: ", 0) == 0);
}

TEST_CASE("comparison: runs of different repositories or targets are said to be so") {
  auto runs = two_runs();
  runs[0].report.provenance.repo = "/src/kernels-a";
  runs[1].report.provenance.repo = "/src/kernels-b";
  runs[1].report.provenance.plugin_target = "other";
  Comparison c = build_comparison(runs);
  REQUIRE(c.notes.size() >= 2);
  CHECK(c.notes[0] == "the runs measure different repositories: /src/kernels-a, /src/kernels-b");
  CHECK(c.notes[1].rfind("the runs measure different targets: ", 0) == 0);
  CHECK(c.notes[1].find("other") != std::string::npos);
}

TEST_CASE("comparison: runs that share no shape are told apart from runs that share one") {
  auto runs = two_runs();
  CHECK(shares_a_shape(build_comparison(runs)));
  for (auto& row : runs[1].report.shapes) row.shape = "other-" + row.shape;
  CHECK_FALSE(shares_a_shape(build_comparison(runs)));
}

TEST_CASE("comparison: one shape id with other parameters in another run is another problem") {
  auto runs = two_runs();
  runs[1].report.shapes[0].params["m"] = 8;  // a grid edited in place
  const Comparison c = build_comparison(runs);
  REQUIRE(c.shapes.size() == 5);
  CHECK(c.shapes[0].shape == runs[0].report.shapes[0].shape);
  CHECK(c.shapes[0].runs[0]);
  CHECK_FALSE(c.shapes[0].runs[1]);
  CHECK(c.shapes[4].shape == runs[0].report.shapes[0].shape);  // its own row, last seen
  CHECK_FALSE(c.shapes[4].runs[0]);
  CHECK(c.shapes[4].runs[1]);
  std::string note;
  for (const auto& n : c.notes)
    if (n.find("different problem") != std::string::npos) note = n;
  CHECK(note.rfind("shape " + c.shapes[0].shape + " is a different problem in different runs (",
                   0) == 0);
  CHECK(note.find("\"m\":8") != std::string::npos);
  CHECK(note.find("from run 20260108-000000-h200") != std::string::npos);
  CHECK(note.find("each version has its own row and is not compared") != std::string::npos);
  // The same parameters again: one row, no such note.
  runs[1].report.shapes[0].params = runs[0].report.shapes[0].params;
  const Comparison same = build_comparison(runs);
  CHECK(same.shapes.size() == 4);
  for (const auto& n : same.notes) CHECK(n.find("different problem") == std::string::npos);
}

TEST_CASE("comparison: the JSON mapping round-trips and matches its schema") {
  Comparison c = build_comparison(two_runs());
  json j = to_json(c);
  CHECK(comparison_from_json(j, "compare.json") == c);
  json schema =
      read_json_file(std::filesystem::path(ABH_SOURCE_DIR) / "schemas/compare.schema.json");
  std::vector<std::string> errors;
  validate_schema(j, schema, schema, "compare", errors);
  CHECK(errors.empty());
  CHECK(j["title"] == kCompareTitle);
  json bad = j;
  bad["shapes"][0]["runs"].erase(1);
  CHECK_THROWS_WITH_AS(comparison_from_json(bad, "c.json"), doctest::Contains("1 cells for 2 runs"),
                       Error);
}

TEST_CASE("comparison: every rendering says it compares runs, not an interleaved measurement") {
  Comparison c = build_comparison(two_runs());
  CHECK(comparison_formats() ==
        std::vector<std::string>{"terminal", "markdown", "json", "csv", "svg"});
  for (const auto& f : comparison_formats()) {
    CAPTURE(f);
    const std::string out = render_comparison(c, f);
    // A CSV is a header row and data rows only (RFC 4180 has no comments); its columns are
    // named per run. Every other rendering carries the title.
    if (f != "csv")
      CHECK(out.find("not interleaved: machine and time differ") != std::string::npos);
    CHECK(out.find("m128_n4096_k4096") != std::string::npos);
  }
  CHECK_THROWS_AS(render_comparison(c, "pr"), UsageError);

  const std::string md = render_comparison(c, "markdown");
  CHECK(md.find("not in run") != std::string::npos);
  CHECK(md.find("| [1] 20260101-000000-abcd | [2] 20260108-000000-h200 |") != std::string::npos);

  auto rows = parse_csv(render_comparison(c, "csv"));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].size() == 2 + 2 * 7);
  CHECK(rows[0][2] == "20260101-000000-abcd_present");
  CHECK(rows[4][2 + 7] == "false");  // the failed shape is not in run 2
  CHECK(std::stod(rows[1][4]) == *c.shapes[0].runs[0]->speedup);

  const std::string svg = render_comparison(c, "svg");
  CHECK(check_xml(svg).front() == "svg");
  CHECK(count(svg, "class=\"bar\"") == 6);  // 3 compared shapes in each run
  CHECK(count(svg, "class=\"run\"") == 8);
}

TEST_CASE("comparison: two runs with one id are told apart by their directories") {
  auto runs = two_runs();
  runs[1].report.provenance.run_id = runs[0].report.provenance.run_id;  // one per machine
  Comparison c = build_comparison(runs);
  CHECK(c.runs[0].label == "20260101-000000-abcd (runs/a)");
  CHECK(c.runs[1].label == "20260101-000000-abcd (elsewhere/b)");
  CHECK(c.runs[1].run_dir == "elsewhere/b");
  CHECK(comparison_from_json(to_json(c), "compare.json") == c);
  const std::string md = render_comparison(c, "markdown");
  CHECK(md.find("| [1] 20260101-000000-abcd (runs/a) | [2] 20260101-000000-abcd (elsewhere/b) |") !=
        std::string::npos);
  const auto header = parse_csv(render_comparison(c, "csv"))[0];
  CHECK(header[2] == "20260101-000000-abcd (runs/a)_present");
  CHECK(header[2 + 7] == "20260101-000000-abcd (elsewhere/b)_present");
  for (const auto& f : comparison_formats()) {
    CAPTURE(f);
    const std::string out = render_comparison(c, f);
    CHECK(out.find("runs/a") != std::string::npos);
    CHECK(out.find("elsewhere/b") != std::string::npos);
  }
  // Distinct ids keep their plain labels.
  CHECK(build_comparison(two_runs()).runs[1].label == "20260108-000000-h200");
}

TEST_CASE("comparison: the terminal table colours each run's verdict only when asked") {
  const Comparison c = build_comparison(two_runs());
  const std::string plain = render_comparison(c, "terminal");
  CHECK(plain.find("\x1b[") == std::string::npos);
  RenderOptions colour;
  colour.color = true;
  const std::string coloured = render_comparison(c, "terminal", colour);
  CHECK(coloured.find(std::string(fmt::verdict_colour(Verdict::faster)) + "1.1") !=
        std::string::npos);  // run 1's shape 0: 10% faster, in green
  CHECK(coloured.find(fmt::verdict_colour(Verdict::slower)) != std::string::npos);
  // Colour is added after padding: without the escapes the table is the plain one.
  std::string stripped = coloured;
  for (auto i = stripped.find("\x1b["); i != std::string::npos; i = stripped.find("\x1b[", i))
    stripped.erase(i, stripped.find('m', i) - i + 1);
  CHECK(stripped == plain);
  // Only the terminal table has colour.
  CHECK(render_comparison(c, "markdown", colour) == render_comparison(c, "markdown"));
}

TEST_CASE("comparison: every row of the terminal table is as wide as its header") {
  // The last column holds times, aligned on the right like the other numbers: its values are
  // padded to the header's width rather than left short.
  const std::string plain = render_comparison(build_comparison(two_runs()), "terminal");
  const auto table = plain.substr(plain.find("\nshape ") + 1);
  std::vector<std::size_t> widths;
  for (std::size_t at = 0, end; (end = table.find('\n', at)) != std::string::npos; at = end + 1)
    if (end > at) widths.push_back(text_table::width(table.substr(at, end - at)));
  REQUIRE(widths.size() >= 3);
  for (std::size_t w : widths) CHECK(w == widths.front());
}
