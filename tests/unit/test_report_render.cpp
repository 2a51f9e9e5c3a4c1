// Every report format rendered from one report and checked for structure: one CSV row and one SVG
// bar per shape, well-formed XML, Markdown summary before the table, provenance folded, colour only
// when asked, deterministic bytes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "report/svg.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

TEST_CASE("report: formats are registered and rendering is deterministic") {
  CHECK(report_formats() ==
        std::vector<std::string>{"terminal", "markdown", "json", "csv", "tidy-csv", "svg", "pr"});
  CHECK(report_format("tidy-csv").extension == "tidy.csv");
  CHECK(report_format("markdown").extension == "md");
  CHECK_THROWS_AS(render(sample_report(), "html", {}), UsageError);
  Report a = sample_report(), b = sample_report();
  for (const auto& f : report_formats()) CHECK(render(a, f, {}) == render(b, f, {}));
}

TEST_CASE("report: CSV has a header and one RFC 4180 row per shape") {
  Report r = sample_report();
  auto rows = parse_csv(render(r, "csv", {}));
  REQUIRE(rows.size() == r.shapes.size() + 1);
  for (const auto& row : rows) CHECK(row.size() == rows[0].size());
  CHECK(rows[0][0] == "shape");
  CHECK(rows[1][1] == kAwkwardLabel);  // comma, quotes survive quoting
  CHECK(rows[4][2] == "failed");
  CHECK(rows[4][3].empty());  // no speedup for a failed shape
  CHECK(rows[4][10].find("second line") != std::string::npos);
  CHECK(std::stod(rows[1][3]) == *r.shapes[0].speedup);  // full precision
}

TEST_CASE("report: SVG is well-formed with one bar per compared shape") {
  Report r = sample_report();
  std::string svg = render(r, "svg", {});
  auto elements = check_xml(svg);
  CHECK(elements.front() == "svg");
  CHECK(count(svg, "class=\"bar\"") == 3);  // the failed shape has none
  CHECK(count(svg, "class=\"ci\"") == 3);
  CHECK(count(svg, "class=\"drift\"") == 3);
  CHECK(count(svg, "class=\"reference\"") == 1);
  CHECK(count(svg, "class=\"noise-band\"") == 1);
  CHECK(count(svg, "class=\"failed\"") == 1);
  CHECK(svg.find("&lt;&amp;&gt;") != std::string::npos);  // the awkward label, escaped

  // A real XML parser agrees, where one is installed.
  if (std::system("python3 -c 'import xml.dom.minidom' >/dev/null 2>&1") == 0) {
    auto path = std::filesystem::temp_directory_path() /
                ("abh-report-" + std::to_string(::getpid()) + ".svg");
    std::ofstream(path) << svg;
    int rc = std::system(
        ("python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
         path.string())
            .c_str());
    std::filesystem::remove(path);
    CHECK(rc == 0);
  } else {
    MESSAGE("python3 xml.dom.minidom not available: only the built-in XML check ran");
  }
}

TEST_CASE("report: Markdown puts the summary first and folds provenance") {
  Report r = sample_report();
  std::string md = render(r, "markdown", {});
  auto summary = md.find("**Geomean speedup"), table = md.find("| shape |"),
       details = md.find("<details><summary>Provenance</summary>");
  REQUIRE(summary != std::string::npos);
  REQUIRE(table != std::string::npos);
  REQUIRE(details != std::string::npos);
  CHECK(summary < table);
  CHECK(table < details);
  CHECK(count(md, "<details>") == count(md, "</details>"));
  CHECK(md.find("Failed, left out of every aggregate") != std::string::npos);
  CHECK(md.find(r.provenance.result_set_digest) != std::string::npos);
  CHECK(md.find("GPU-1234") != std::string::npos);
  // The awkward label cannot break the table: its '|' is escaped.
  CHECK(md.find("\\|") != std::string::npos);
  // Every per-shape table row has the header's number of cells.
  std::size_t header_cells = 0;
  std::istringstream lines(md.substr(table));
  std::string line;
  std::getline(lines, line);
  auto cells = [](const std::string& l) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < l.size(); ++i) n += l[i] == '|' && (i == 0 || l[i - 1] != '\\');
    return n;
  };
  header_cells = cells(line);
  for (std::size_t i = 0; i < r.shapes.size() + 1 && std::getline(lines, line); ++i)
    CHECK(cells(line) == header_cells);
}

TEST_CASE("report: terminal table aligns columns and colours only when asked") {
  Report r = sample_report();
  std::string plain = render(r, "terminal", {});
  CHECK(plain.find('\x1b') == std::string::npos);
  std::string colour = render(r, "terminal", RenderOptions{true});
  CHECK(colour.find("\x1b[32m") != std::string::npos);  // faster in green
  CHECK(colour.find("\x1b[31m") != std::string::npos);  // slower in red
  CHECK(plain.find("geomean speedup") != std::string::npos);
  CHECK(plain.find("summed-time ratio") != std::string::npos);
  CHECK(plain.find("failed shapes") != std::string::npos);
  CHECK(plain.find("throttled: " + r.shapes[1].shape) != std::string::npos);

  // The speedup column is right-aligned: every row's ratio ends where the header does.
  std::istringstream lines(plain);
  std::string line;
  std::size_t header_end = std::string::npos;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("shape ", 0) == 0) {
      header_end = display_width(line.substr(0, line.find("speedup") + 7));
      continue;
    }
    if (header_end == std::string::npos) continue;
    for (const auto& row : r.shapes) {
      if (line.rfind(row.shape + " ", 0) != 0 || !row.speedup) continue;
      std::string ratio = fmt::ratio(*row.speedup);
      CHECK(display_width(line.substr(0, line.find(ratio) + ratio.size())) == header_end);
      ++rows;
    }
  }
  CHECK(rows == 3);
}

TEST_CASE("report: unit formatting is auto-scaled and locale-free") {
  CHECK(fmt::duration(812.34) == "812.3 ns");
  CHECK(fmt::duration(1234.6) == "1.235 \u00b5s");
  CHECK(fmt::duration(999.96) == "1.000 \u00b5s");  // rounding carries into the next unit
  CHECK(fmt::duration(12.5e6) == "12.50 ms");
  CHECK(fmt::duration(3.2e9) == "3.200 s");
  CHECK(fmt::drift(1.0012) == "+0.12%");
  CHECK(fmt::drift(0.99) == "-1.00%");
  CHECK(fmt::drift(0.99999) == "+0.00%");
  CHECK(fmt::confidence_label(0.95) == "95% CI");
  CHECK(fmt::confidence_label(0.995) == "99.5% CI");
}

TEST_CASE("render: CSV defuses formulas and hides no control character, text keeps its letters") {
  using fmt::csv_field;
  CHECK(csv_field("=HYPERLINK(\"http://evil\",\"x\")") ==
        "\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\"");
  CHECK(csv_field("+SUM(1;2)") == "'+SUM(1;2)");
  CHECK(csv_field("@x") == "'@x");
  CHECK(csv_field("-cmd") == "'-cmd");
  // Numbers stay numbers, negative ones included.
  CHECK(csv_field("-0.0012") == "-0.0012");
  CHECK(csv_field("+1e-3") == "+1e-3");
  CHECK(csv_field("12.5") == "12.5");
  // A terminal escape or NUL cannot reach a terminal through --print csv; line breaks are data.
  CHECK(csv_field(std::string("a\x1b[31mb\0c", 9)) == "a?[31mb?c");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("x\u202Ey") == "x?y");
  CHECK(csv_field("é 漢 m1_n2") == "é 漢 m1_n2");
}

TEST_CASE("render: one line hides bidirectional controls and the characters XML refuses") {
  CHECK(fmt::one_line("x\uFFFEy\uFFFFz") == "x?y?z");
  CHECK(fmt::one_line("a\u202Eb\u2066c\u200Fd\u061Ce") == "a?b?c?d?e");
  CHECK(fmt::one_line("a\u0085b") == "a?b");         // C1 next line
  CHECK(fmt::one_line("é\u2028漢") == "é\u2028漢");  // other characters are the label's
  CHECK(svg::xml("<x\uFFFE>") == "&lt;x?&gt;");
}
