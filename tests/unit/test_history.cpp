// The history page's data (report/history.hpp): runs ordered by when they were planned and
// labelled with the candidate's short commit, each shape's estimate per run taken from that run's
// report (a shape missing from a run has no point there), the machine of each run from its plan,
// one JSON mapping that round-trips and matches schemas/history.schema.json, and a page that
// embeds exactly that JSON where no label can end its <script> element.
#include <doctest/doctest.h>

#include "report/history.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

// A run of `shapes` shapes planned at `created_at`, with the candidate at a commit of `c`s.
HistorySource history_source(int shapes, const std::string& created_at, char c,
                             const std::string& dir) {
  Plan p = make_plan(shapes);
  p.created_at = created_at;
  p.run_id = "run-" + dir;
  p.run_nonce = std::string(32, c);
  p.variants[1].source.kind = "commit";
  p.variants[1].source.requested = "HEAD";
  p.variants[1].source.commit = std::string(40, c);
  Report r = build_report(p, make_outcomes(p), StatsOptions{}, "sha256:" + std::string(64, c));
  return {p, r, "runs/" + dir, "../runs/" + dir + "/report.md"};
}

// Three runs given out of date order: the middle one lacks the fourth (failed) shape, and the
// last ran on two lanes of another GPU.
std::vector<HistorySource> three_sources() {
  std::vector<HistorySource> s;
  s.push_back(history_source(4, "2026-01-03T00:00:00Z", 'c', "third"));
  s.push_back(history_source(4, "2026-01-01T00:00:00Z", 'a', "first"));
  s.push_back(history_source(3, "2026-01-02T00:00:00Z", 'b', "second"));
  Plan& p = s[0].plan;
  p.machine[0].gpu->name = "NVIDIA H100";
  p.machine.push_back(p.machine[0]);
  p.machine[1].gpu->uuid = "GPU-5678";
  return s;
}

}  // namespace

TEST_CASE("history: runs in date order, each shape's estimate per run from its report") {
  const auto sources = three_sources();
  const HistoryPage h = build_history(sources);
  REQUIRE(h.runs.size() == 3);
  CHECK(h.runs[0].run_id == "run-first");
  CHECK(h.runs[1].run_id == "run-second");
  CHECK(h.runs[2].run_id == "run-third");
  CHECK(h.runs[0].commit_label == "aaaaaaa");
  CHECK(h.runs[0].candidate_commit == std::string(40, 'a'));
  CHECK(h.runs[0].candidate_kind == "commit");
  CHECK(h.runs[0].created_at == "2026-01-01T00:00:00Z");
  CHECK(h.runs[0].run_nonce == std::string(32, 'a'));
  CHECK(h.runs[0].run_dir == "runs/first");
  CHECK(h.runs[0].report_link == "../runs/first/report.md");
  CHECK(h.runs[0].baseline == "main (aaaaaaaaaaaa)");
  CHECK(h.runs[0].candidate == "HEAD (aaaaaaaaaaaa)");
  CHECK(h.runs[0].machines == std::vector<std::string>{"host: NVIDIA H200, driver 580.00"});
  // Two lanes of one GPU model are one line, counted; the UUIDs that tell them apart are not
  // what a reader of a history compares.
  CHECK(h.runs[2].machines == std::vector<std::string>{"2 × host: NVIDIA H100, driver 580.00"});
  CHECK(h.runs[1].shapes == 3);
  CHECK(h.runs[2].geomean == sources[0].report.summary.geomean);
  CHECK(h.runs[2].geomean_ci == sources[0].report.summary.geomean_ci);
  CHECK(h.runs[2].repo == "/tmp/kernels");
  CHECK(h.runs[2].plugin_target == "cpu");

  REQUIRE(h.shapes.size() == 4);
  const Report& first = sources[1].report;  // the earliest run
  for (std::size_t s = 0; s < 4; ++s) {
    CAPTURE(s);
    CHECK(h.shapes[s].shape == first.shapes[s].shape);
    CHECK(h.shapes[s].label == first.shapes[s].label);
    CHECK(h.shapes[s].timing == "kernel");
  }
  // Shapes 0..2 are in every run; the point of run k is that run's report row.
  const HistorySource* by_date[] = {&sources[1], &sources[2], &sources[0]};
  for (std::size_t s = 0; s < 3; ++s) {
    REQUIRE(h.shapes[s].points.size() == 3);
    for (int k = 0; k < 3; ++k) {
      CHECK(h.shapes[s].points[k].run == k);
      CHECK(h.shapes[s].points[k].estimate ==
            static_cast<const ShapeEstimate&>(by_date[k]->report.shapes[s]));
    }
  }
  CHECK(h.shapes[0].points[0].estimate.speedup.has_value());
  CHECK(h.shapes[0].points[0].estimate.ci.has_value());
  // The fourth shape failed (its A2 arm) and is missing from the second run.
  REQUIRE(h.shapes[3].points.size() == 2);
  CHECK(h.shapes[3].points[0].run == 0);
  CHECK(h.shapes[3].points[1].run == 2);
  CHECK(h.shapes[3].points[0].estimate.verdict == Verdict::failed);
  CHECK_FALSE(h.shapes[3].points[0].estimate.speedup);
  CHECK(h.notes == std::vector<std::string>{
                       "1 of 4 shape(s) are missing from some run (their charts have gaps there)"});
  CHECK(h.stats == StatsOptions{});
}

TEST_CASE("history: runs planned in one second keep the order given") {
  auto sources = three_sources();
  for (auto& s : sources) s.plan.created_at = "2026-01-01T00:00:00Z";
  const HistoryPage h = build_history(sources);
  CHECK(h.runs[0].run_id == "run-third");
  CHECK(h.runs[1].run_id == "run-first");
  CHECK(h.runs[2].run_id == "run-second");
  CHECK_THROWS_AS(build_history({}), UsageError);
}

TEST_CASE("history: a working tree with changes is labelled -dirty, one without is its commit") {
  const std::string none = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  auto sources = three_sources();
  SourceIdentity& id = sources[1].plan.variants[1].source;
  id.kind = "worktree";
  id.tracked_diff_sha256 = none;
  id.untracked_sha256 = none;
  CHECK(build_history(sources).runs[0].commit_label == "aaaaaaa");
  id.submodules.push_back({"third_party/x", std::string(40, 'f'), true, std::string(64, '9')});
  CHECK(build_history(sources).runs[0].commit_label == "aaaaaaa-dirty");
  id.submodules.clear();
  id.tracked_diff_sha256 = std::string(64, '7');
  const HistoryPage h = build_history(sources);
  CHECK(h.runs[0].commit_label == "aaaaaaa-dirty");
  CHECK(h.runs[0].candidate_kind == "worktree");
}

TEST_CASE("history: runs of different repositories or targets are said to be so") {
  auto sources = three_sources();
  sources[0].plan.repo = "/src/other";
  sources[2].plan.plugin_target = "cuda";
  const HistoryPage h = build_history(sources);
  REQUIRE(h.notes.size() == 3);
  CHECK(h.notes[0] == "the runs measure different repositories: /src/other, /tmp/kernels");
  CHECK(h.notes[1] == "the runs measure different targets: cpu, cuda");
}

TEST_CASE("history: one shape id with another timing in a later run gets a line of its own") {
  std::vector<HistorySource> s = three_sources();
  for (auto& row : s[0].report.shapes) row.timing = "graph";  // the third run, by date
  const HistoryPage h = build_history(s);
  CHECK(h.shapes.size() == 8);
  bool noted = false;
  for (const auto& n : h.notes)
    noted |= n.find("is a different problem in different runs") != std::string::npos &&
             n.find("timing graph from run run-third") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("history: the JSON mapping round-trips and matches its schema") {
  const HistoryPage h = build_history(three_sources());
  const json j = to_json(h);
  CHECK(history_from_json(j, "history.json") == h);
  const json schema =
      read_json_file(std::filesystem::path(ABH_SOURCE_DIR) / "schemas/history.schema.json");
  std::vector<std::string> errors;
  validate_schema(j, schema, schema, "history", errors);
  CHECK(errors.empty());
  for (const auto& e : errors) MESSAGE(e);
  // A point names its run by position: one past the runs, or out of order, is refused by name.
  json bad = j;
  bad["shapes"][3]["points"][1]["run"] = 3;
  CHECK_THROWS_WITH_AS(history_from_json(bad, "h.json"),
                       doctest::Contains("h.json.shapes[3].points[1]: field 'run': 3"), Error);
  bad = j;
  bad["shapes"][0]["points"][1]["run"] = 0;
  CHECK_THROWS_AS(history_from_json(bad, "h.json"), Error);
  bad = j;
  bad["schema_version"] = 2;
  CHECK_THROWS_WITH_AS(history_from_json(bad, "h.json"), doctest::Contains("schema_version"),
                       Error);
  // The schema is not vacuous: a string speedup fails it.
  bad = j;
  bad["shapes"][0]["points"][0]["speedup"] = "fast";
  errors.clear();
  validate_schema(bad, schema, schema, "history", errors);
  CHECK_FALSE(errors.empty());
}

TEST_CASE("history: the page embeds the JSON, where no label can end the script element") {
  auto sources = three_sources();
  // kAwkwardLabel (shape 0's label) holds "<&>"; a run directory can hold a closing tag.
  sources[1].run_dir = "runs/</script><script>alert(1)</script>";
  const HistoryPage h = build_history(sources);
  const std::string page = render_history_html(h, "chart.min.js");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("<script src=\"chart.min.js\"></script>") != std::string::npos);
  CHECK(page.find("alert(1)</script>") == std::string::npos);
  const std::string open = "<script type=\"application/json\" id=\"history-data\">";
  const auto begin = page.find(open);
  REQUIRE(begin != std::string::npos);
  const auto end = page.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  const std::string embedded = page.substr(begin + open.size(), end - begin - open.size());
  CHECK(embedded.find('<') == std::string::npos);
  CHECK(json::parse(embedded) == to_json(h));
  CHECK(count(page, "<canvas") == 0);  // charts are made by the page's script, lazily
  CHECK(page.find("IntersectionObserver") != std::string::npos);
  CHECK(page.find("id=\"errors\"") != std::string::npos);
  CHECK_THROWS_WITH_AS(render_history_html(h, "../x.js"), doctest::Contains("plain file name"),
                       Error);
}
