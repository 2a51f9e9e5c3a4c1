// The history of a kernel over commits (`abharness history RUN... --out DIR`): finished runs, each
// its own interleaved A/B/A measurement, put in the order they were planned, with each shape's
// speedup, interval and absolute times per run, for a static HTML page of one chart per shape
// (render_history_html.cpp, docs/history.md). Like a comparison (comparison.hpp) it is built from
// each run's report after the run passed provenance validation, and a difference between two runs
// is not a measured speedup: machine and time differ.
//
// The data comes first: HistoryPage is what the page shows, with one JSON mapping
// (schemas/history.schema.json) that the page embeds and `history --out` also writes as
// history.json, so a program reads the same numbers the charts draw.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "report/report.hpp"
#include "report/run_headline.hpp"
#include "system/json_io.hpp"

namespace abh {

inline constexpr int kHistorySchemaVersion = 1;

// One run: a point on every chart's x axis.
// Its machines are named by GPU model, lanes of one model counted: "8 × host: NVIDIA H200, ...".
struct HistoryRun : RunHeadline {
  std::string run_nonce;  // the plan's: what tells two runs apart, even with one id
  // The run's report, relative to the page's directory (report.md, or report.html where there is
  // no report.md); empty when the run directory holds neither.
  std::string report_link;
  // The x axis label: the candidate commit's short id (7 hex digits, as git abbreviates it),
  // "-dirty" appended when the candidate was a working tree with changes over that commit.
  std::string commit_label;
  std::string candidate_commit;  // the full commit id
  std::string candidate_kind;    // "commit" | "worktree"
  std::string repo, plugin_target;
  bool operator==(const HistoryRun&) const = default;
};

// One shape in one run: that run's estimate (a failed shape has a verdict and no numbers).
struct HistoryPoint {
  int run = 0;  // index into HistoryPage::runs
  ShapeEstimate estimate;
  bool operator==(const HistoryPoint&) const = default;
};

// One chart: a shape (a report row: a shape id, with "@timing" when a run measured several).
struct HistoryShape {
  std::string shape;
  std::string label;
  std::string timing;
  std::vector<HistoryPoint> points;  // one per run that measured the shape, in run order
  bool operator==(const HistoryShape&) const = default;
};

struct HistoryPage {
  int schema_version = kHistorySchemaVersion;
  StatsOptions stats;            // every run's report was computed with these
  std::vector<HistoryRun> runs;  // by created_at, then in the order given
  // Every shape of any run, in the order first seen along `runs`; a shape measured by only some
  // runs has points for those alone.
  std::vector<HistoryShape> shapes;
  // What the charts cannot show: runs of different repositories or targets, shapes missing from
  // some runs. One sentence each.
  std::vector<std::string> notes;
  bool operator==(const HistoryPage&) const = default;
};

// One validated run: its plan (identities, machine, creation time, nonce) and the report built
// from its results.
struct HistorySource {
  Plan plan;
  Report report;
  std::string run_dir;      // as given
  std::string report_link;  // see HistoryRun::report_link
};

// `sources` in any order: the page orders them by the plan's created_at (stable, so runs planned
// in one second keep the order given). Throws UsageError without a source.
HistoryPage build_history(const std::vector<HistorySource>& sources);

json to_json(const HistoryPage& h);
HistoryPage history_from_json(const json& j, const std::string& where);

// The page: index.html, which loads Chart.js from `chart_js` (a file name beside it) and draws
// from the JSON of `h`, embedded in the page (render_history_html.cpp).
std::string render_history_html(const HistoryPage& h, const std::string& chart_js);

}  // namespace abh
