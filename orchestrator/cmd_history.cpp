// `abharness history RUN... --out DIR`: a static HTML page of a kernel's history over commits, one
// chart per shape (report/history.hpp, docs/history.md). Each run is validated against its plan
// first, exactly as `verify` does: a run that fails is named and refused (exit 3) and nothing is
// written. Then each run's report is computed with the same statistics options and the page
// written: DIR/index.html, DIR/history.json (its data) and DIR/chart.min.js, a copy of the Chart.js
// the page draws with, so that the page needs no server and no network.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "conclude.hpp"
#include "exit_codes.hpp"
#include "paths.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "report/history.hpp"
#include "report/report_builder.hpp"
#include "report/variants_report.hpp"
#include "run_command.hpp"
#include "seen_runs.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// Debian's libjs-chart.js (Chart.js 3.9 in Debian 12): a packaged, minified UMD build that
// defines window.Chart, so the page loads it with a plain <script src> from a file:// URL.
constexpr const char* kDebianChartJs = "/usr/share/javascript/chart.js/chart.min.js";
// Its name beside index.html.
constexpr const char* kHistoryChartJsName = "chart.min.js";

struct HistoryFlags {
  std::vector<std::string> runs;
  std::string out;
  std::string chart_js = kDebianChartJs;
  StatsOptions stats;
};

std::string read_chart_js(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw Error("history: Chart.js is not at " + path +
                " (the page draws its charts with it); fix: install the Debian package "
                "libjs-chart.js (apt-get install libjs-chart.js; scripts/install-deps.sh "
                "installs it), or give --chart-js FILE, a UMD build of Chart.js 3 or 4");
  return read_text_file(path);
}

// The run's report as the page links it: relative to the page's directory, so that the page and
// the runs can be moved together, or served from one root.
std::string history_report_link(const fs::path& run, const fs::path& out) {
  const fs::path run_abs = fs::weakly_canonical(fs::absolute(run));
  const fs::path out_abs = fs::weakly_canonical(fs::absolute(out));
  for (const char* name : {"report.md", "report.html"}) {
    std::error_code ec;
    if (fs::is_regular_file(run_abs / name, ec))
      return (run_abs / name).lexically_relative(out_abs).generic_string();
  }
  return "";
}

int run_history(const HistoryFlags& f) {
  validate(f.stats);
  refuse_output_in_run(f.out, "--out");
  const std::string chart_js = read_chart_js(f.chart_js);
  const std::vector<std::string> dirs = run_dirs_among(f.runs, "history");
  if (dirs.empty()) throw UsageError("history: none of the directories given is a run");
  std::vector<Plan> plans;
  SeenRuns seen("history");
  for (const auto& dir : dirs) {
    plans.push_back(load_plan(dir));
    seen.add(dir, plans.back());
  }
  std::vector<HistorySource> sources;
  int refused = 0;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const std::string& dir = dirs[i];
    const Validation v = validate_run(dir, plans[i], adaptive_blocks);
    if (!v.problems.empty()) {
      std::cerr << "abharness: history: run " << dir << " (" << plans[i].run_id
                << ") is refused:\n";
      print_problems(v, dir);
      ++refused;
      continue;
    }
    if (!v.complete())
      std::cerr << "abharness: history: run " << dir << " (" << plans[i].run_id
                << ") is incomplete: its shapes with a failed arm are shown as failed\n";
    require_two_variant_plan(plans[i], "history");
    Report report = build_report(plans[i], v.outcomes, f.stats, v.result_set_digest);
    sources.push_back(
        {std::move(plans[i]), std::move(report), dir, history_report_link(dir, f.out)});
  }
  if (refused > 0) {
    std::cerr << "abharness: history: " << refused
              << " run(s) failed provenance validation; nothing is written\n";
    return exit_code::kProvenance;
  }
  const HistoryPage page = build_history(sources);
  const fs::path out(f.out);
  // index.html last: a page exists only with its script and data beside it.
  write_file_atomic(out / kHistoryChartJsName, chart_js);
  write_file_atomic(out / "history.json", to_json(page).dump(1) + "\n");
  write_file_atomic(out / "index.html", render_history_html(page, kHistoryChartJsName));
  for (const auto& note : page.notes) std::cerr << "abharness: history: " << note << "\n";
  std::cerr << "history: " << (out / "index.html").string() << " (" << page.runs.size()
            << " run(s), " << page.shapes.size() << " chart(s); history.json, "
            << kHistoryChartJsName << ")\n";
  return exit_code::kSuccess;
}

}  // namespace

void add_history_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<HistoryFlags>();
  auto* c = app.add_subcommand(
      "history", "a static HTML page of finished runs over commits: one chart per shape");
  c->add_option("runs", f->runs, "run directories (one or more, in any order: sorted by date)")
      ->required()
      ->check(CLI::ExistingDirectory);
  c->add_option("--out", f->out, "write index.html, history.json and chart.min.js here")
      ->required();
  c->add_option("--chart-js", f->chart_js,
                "the Chart.js file copied beside the page (Debian: libjs-chart.js)")
      ->capture_default_str();
  add_stats_flags(*c, f->stats);
  c->footer(R"(Examples:
  abharness history runs/* --out history/ && xdg-open history/index.html
  abharness history runs/nightly-* --out public/history --confidence 0.99
Each run is verified first: a run that fails validation is named and refused (exit 3) and nothing
is written. Runs are ordered by when they were planned and labelled with the candidate commit.
The page works from the file system (no server, no network); it links each run's report.md
relatively, so keep the page and the runs where they were, or move them together. index.html?all=1
draws every chart at once, ?q=TEXT filters shapes. docs/history.md says what the page shows.)");
  c->callback([f, &exit_code] { exit_code = run_history(*f); });
}

}  // namespace abh
