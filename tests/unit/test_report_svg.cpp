// The SVG chart as a reader's tools draw it: speedups on a logarithmic axis (2x and 0.5x equally
// far from 1), labels cut to their room with the whole text kept as a <title>, and a grid too
// large for one row per shape summarised (histogram, lowest speedups named) at a size renderers
// draw.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "report/svg.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

// The x of every <rect class="bar">: (x, width).
std::vector<std::pair<double, double>> bars(const std::string& svg) {
  std::vector<std::pair<double, double>> out;
  const std::regex bar(R"re(<rect class="bar" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bar); it != std::sregex_iterator();
       ++it)
    out.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  return out;
}

// XML text as read: the five entities back to their characters.
std::string unescape(std::string s) {
  for (auto [entity, c] :
       {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}})
    for (auto i = s.find(entity); i != std::string::npos; i = s.find(entity, i + 1))
      s.replace(i, std::strlen(entity), c);
  return s;
}

// The height attribute of the <svg> element.
double svg_height(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<svg [^>]*height="([0-9.]+)")re")));
  return std::stod(m[1]);
}

// A plan of `n` shapes ("s0000"...) whose candidate is 10% faster, the same, 10% slower, the same,
// shape by shape, as make_outcomes makes them; shape 3's A2 arm fails.
Report grid_report(int n) {
  Plan p = make_plan(4);
  p.shapes.clear();
  for (int i = 0; i < n; ++i) {
    Shape s;
    char id[16];
    std::snprintf(id, sizeof id, "s%04d", i);
    s.id = id;
    s.params = {{"m", 16 + i}, {"n", 4096}, {"k", 4096}};
    p.shapes.push_back(s);
  }
  p.tasks = make_schedule(p.shapes, p.schedule);
  for (auto& t : p.tasks) t.cpus = {7};
  StatsOptions opt;
  opt.resamples = 200;  // the chart's layout, not the intervals' precision, is under test
  return build_report(p, make_outcomes(p), opt, "sha256:" + std::string(64, 'r'));
}

}  // namespace

TEST_CASE("svg: the speedup axis is logarithmic: 2x and 0.5x are equally long bars") {
  Report r = sample_report();
  r.shapes.resize(2);
  *r.shapes[0].speedup = 2.0;
  r.shapes[0].ci = Interval{1.9, 2.1};
  *r.shapes[1].speedup = 0.5;
  r.shapes[1].ci = Interval{0.45, 0.55};
  const auto b = bars(render(r, "svg", {}));
  REQUIRE(b.size() == 2);
  CHECK(std::abs(b[0].second - b[1].second) < 0.05);                // equally long
  CHECK(std::abs(b[0].first - (b[1].first + b[1].second)) < 0.05);  // meeting at 1.0

  const svg::Scale x = svg::speedup_scale({0.1, 10}, 0.01, 0, 1000);
  CHECK(std::abs((x(1) - x(0.1)) - (x(10) - x(1))) < 1e-9);
  const auto ticks = svg::speedup_ticks(x);
  CHECK(std::find(ticks.begin(), ticks.end(), 1.0) != ticks.end());
  CHECK(std::find(ticks.begin(), ticks.end(), 10.0) != ticks.end());
  CHECK(ticks.size() >= 5);  // 0.1, 0.2, 0.5, 1, 2, 5, 10: no two labels overlap at 1000 px
  for (std::size_t i = 1; i < ticks.size(); ++i) CHECK(x(ticks[i]) - x(ticks[i - 1]) >= 52);
}

TEST_CASE("svg: a label longer than its room is cut with an ellipsis and kept whole in a title") {
  Report r = sample_report();
  const std::string longest =
      "layer 31 attention output projection, fused with the residual add and an RMSNorm";
  r.shapes[1].label = longest;
  const std::string svg = render(r, "svg", {});
  check_xml(svg);
  const std::regex text(R"re(<text x="242.00"[^>]*>(<title>([^<]*)</title>)?([^<]*)</text>)re");
  bool cut = false;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
       ++it) {
    const std::string shown = unescape((*it)[3]);
    // 234 px of 12 px text at 0.62 em a character: 31 characters at most.
    CHECK(display_width(shown) <= svg::chars_that_fit(234, 12));
    if (shown.find(r.shapes[1].shape) == 0) {
      cut = true;
      CHECK(shown.size() > 3);
      CHECK(shown.substr(shown.size() - 3) == "\u2026");
      CHECK(unescape((*it)[2]).find(longest) != std::string::npos);
    }
  }
  CHECK(cut);
  // A cut never splits a UTF-8 character.
  CHECK(svg::truncate("\u00b5\u00b5\u00b5\u00b5", 3) == "\u00b5\u00b5\u2026");
  CHECK(svg::truncate("abc", 3) == "abc");
}

TEST_CASE("svg: a long subtitle wraps onto more lines instead of running off the chart") {
  const auto lines = svg::wrap(std::string(50, 'a') + " " + std::string(50, 'b') + " c", 400, 12);
  REQUIRE(lines.size() == 2);
  for (const auto& l : lines) CHECK(l.size() <= svg::chars_that_fit(400, 12));
  CHECK(lines[1] == std::string(50, 'b') + " c");
}

TEST_CASE("svg: a small grid draws one row per shape") {
  const Report r = grid_report(40);
  const std::string svg = render(r, "svg", {});
  CHECK(count(svg, "<g class=\"shape\">") == 40);
  CHECK(count(svg, "class=\"bin\"") == 0);
  CHECK(svg_height(svg) < 40 * 24 + 200);
}

TEST_CASE("svg: 3,000 shapes are summarised: a histogram and the lowest speedups named") {
  const Report r = grid_report(3000);
  const std::string svg = render(r, "svg", {});
  check_xml(svg);
  const double h = svg_height(svg);
  CHECK(h < 1200);                          // one row per shape would be 72,000 px
  CHECK(count(svg, "class=\"bin\"") >= 3);  // faster, same and slower shapes
  // Every compared shape is counted in the histogram's titles.
  int counted = 0;
  const std::regex bin(R"re(<title>([0-9]+) [a-z]+ shape\(s\) with a speedup)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), bin); it != std::sregex_iterator();
       ++it)
    counted += std::stoi((*it)[1]);
  CHECK(counted == r.summary.shapes_compared);
  // 20 rows of the lowest speedups (the 10% slower shapes) and the one failed shape.
  CHECK(count(svg, "<g class=\"shape\">") == 21);
  CHECK(count(svg, "class=\"failed\"") == 1);
  CHECK(svg.find(">s0002<") != std::string::npos);  // the first of the slower shapes
  CHECK(svg.find(">s0000<") == std::string::npos);  // a faster one is not named

  // A real renderer draws it at the size it says (one row per shape made rsvg-convert refuse:
  // its images stop at 32,767 px).
  const auto dir =
      std::filesystem::temp_directory_path() / ("abh-svg-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "r.svg") << svg;
  const int rc = std::system(("rsvg-convert -o " + (dir / "r.png").string() + " " +
                              (dir / "r.svg").string() + " 2>" + (dir / "err").string())
                                 .c_str());
  REQUIRE_MESSAGE(rc == 0, "rsvg-convert failed (install librsvg2-bin: scripts/install-deps.sh)");
  std::ifstream png(dir / "r.png", std::ios::binary);
  unsigned char head[24] = {};
  png.read(reinterpret_cast<char*>(head), sizeof head);
  auto be32 = [&](int at) {
    return (std::uint32_t(head[at]) << 24) | (std::uint32_t(head[at + 1]) << 16) |
           (std::uint32_t(head[at + 2]) << 8) | std::uint32_t(head[at + 3]);
  };
  CHECK(std::string(reinterpret_cast<char*>(head) + 1, 3) == "PNG");
  CHECK(be32(16) == 960);
  CHECK(std::abs(double(be32(20)) - h) <= 1);
  std::filesystem::remove_all(dir);
}
