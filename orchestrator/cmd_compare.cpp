// `abharness compare RUN_DIR...`: finished runs side by side (report/comparison.hpp). Each run is
// validated against its plan first, exactly as `verify` does: a run that fails is named and
// refused (exit 3) and nothing is compared. Then each run's report is computed from its own
// results with the same statistics options, and the comparison printed and, with --out, written.
// Runs are told apart by directory and plan nonce, never by id (seen_runs.hpp).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "commands.hpp"
#include "conclude.hpp"
#include "exit_codes.hpp"
#include "paths.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "report/comparison.hpp"
#include "report/report_builder.hpp"
#include "report/variants_report.hpp"
#include "run_command.hpp"
#include "seen_runs.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

struct CompareFlags {
  std::vector<std::string> runs;
  StatsOptions stats;
  std::string print = "terminal";
  std::string color = "auto";  // auto | always | never: the terminal table's verdicts
  std::string out;
  bool quiet = false;
  bool print_asked = false;  // --print was given: --quiet does not silence it
};

// The report of one run, or nothing when it fails validation (its problems are printed).
std::optional<Report> verified_report(const fs::path& dir, const Plan& plan,
                                      const StatsOptions& stats) {
  require_two_variant_plan(plan, "compare");
  Validation v = validate_run(dir, plan, adaptive_blocks);
  if (!v.problems.empty()) {
    std::cerr << "abharness: compare: run " << dir.string() << " (" << plan.run_id
              << ") is refused:\n";
    print_problems(v, dir);
    return std::nullopt;
  }
  if (!v.complete())
    std::cerr << "abharness: compare: run " << dir.string() << " (" << plan.run_id
              << ") is incomplete: its shapes with a failed arm are shown as failed\n";
  return build_report(plan, v.outcomes, stats, v.result_set_digest);
}

int run_compare(const CompareFlags& f) {
  validate(f.stats);
  if (!f.out.empty()) refuse_output_in_run(f.out, "--out");
  const std::vector<std::string> dirs = run_dirs_among(f.runs, "compare");
  if (dirs.size() < 2)
    throw UsageError("compare: give at least two run directories (one run has nothing to compare)");
  std::vector<Plan> plans;
  SeenRuns seen("compare");
  for (const auto& dir : dirs) {
    plans.push_back(load_plan(dir));
    seen.add(dir, plans.back());
  }
  std::vector<RunToCompare> runs;
  int refused = 0;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    std::optional<Report> r = verified_report(dirs[i], plans[i], f.stats);
    if (r)
      runs.push_back({std::move(*r), dirs[i]});
    else
      ++refused;
  }
  if (refused > 0) {
    std::cerr << "abharness: compare: " << refused
              << " run(s) failed provenance validation; nothing is compared\n";
    return exit_code::kProvenance;
  }
  const Comparison c = build_comparison(runs);
  if (!shares_a_shape(c))
    throw UsageError("compare: the runs share no shape, so nothing can be put side by side (" +
                     join(c.notes, "; ") + "): compare runs of the same grid and target");
  if (!f.out.empty())
    for (const auto& format : comparison_formats())
      if (format != "terminal")
        write_file_atomic(fs::path(f.out) / ("compare." + comparison_extension(format)),
                          render_comparison(c, format));
  RenderOptions term;
  term.color = use_color(f.color, ::isatty(STDOUT_FILENO), std::getenv("NO_COLOR"));
  if (!f.quiet || f.print_asked) std::cout << render_comparison(c, f.print, term);
  if (!f.out.empty())
    std::cerr << "comparison: " << (fs::path(f.out) / "compare.md").string()
              << " (.json .csv .svg)\n";
  return exit_code::kSuccess;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<CompareFlags>();
  auto* c = app.add_subcommand(
      "compare", "put finished runs side by side (e.g. one per GPU model, or one per week)");
  c->add_option("runs", f->runs, "run directories (two or more)")
      ->required()
      ->check(CLI::ExistingDirectory);
  add_stats_flags(*c, f->stats);
  c->add_option("--print", f->print, "format printed on stdout")
      ->capture_default_str()
      ->check(CLI::IsMember(comparison_formats()))
      ->each([f](const std::string&) { f->print_asked = true; });
  add_color_option(*c, f->color);
  c->add_option("--out", f->out, "also write compare.{md,json,csv,svg} into this directory");
  c->add_flag("-q,--quiet", f->quiet, "print nothing on stdout unless --print asks (with --out)");
  c->footer(R"(Examples:
  abharness compare runs/h100-run runs/h200-run
  abharness compare runs/last-week runs/today --print markdown --out comparison/
Each run is verified first: a run that fails validation is named and refused (exit 3). The runs
are shown side by side, each with its own intervals; they were measured on different machines or
at different times, so a difference between runs is not a measured speedup. Runs with the same
id (one per machine) are labelled with their directories; one run given twice is refused.)");
  c->callback([f, &exit_code] { exit_code = run_compare(*f); });
}

}  // namespace abh
