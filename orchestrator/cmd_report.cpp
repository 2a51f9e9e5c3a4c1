// `abharness report`: re-render the reports of a run (validating it first), and the report flags
// that run and resume share with it.
#include <unistd.h>

#include <optional>

#include "conclude.hpp"
#include "fraction_option.hpp"
#include "paths.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "report/report_render.hpp"
#include "run_command.hpp"
#include "run_lock.hpp"

namespace abh {

void add_stats_flags(CLI::App& c, StatsOptions& s) {
  add_fraction_option(c, "--noise-band", s.noise_band, "relative band treated as no change")
      ->capture_default_str();
  add_fraction_option(c, "--confidence", s.confidence, "confidence level of intervals")
      ->capture_default_str();
  c.add_option("--resamples", s.resamples, "bootstrap resamples")->capture_default_str();
  add_seed_option(c, "--seed", s.seed, "bootstrap seed");
  c.add_option("--decisive-factor", s.decisive_factor,
               "a faster/slower verdict on one candidate arm, timed on the GPU, needs no "
               "confirmation block when its interval lies wholly beyond this factor (0: always "
               "confirm)")
      ->capture_default_str();
  c.add_option("--prior-conflict", s.prior_conflict_level,
               "a shape whose arms vary more than the other shapes' allow at this level (an F "
               "test) is judged on its own arms and left out of their prior (0: never)")
      ->capture_default_str();
  c.add_option("--outlier-arms", s.outlier_arm_sigmas,
               "an arm whose median lies beyond this many robust standard deviations of the "
               "shape's arms (and half the band) from its variant's other arms, three or more, is "
               "left out as disturbed, and the report names it (0: never)")
      ->capture_default_str();
  c.add_flag_callback(
      "--prior-conflict-pooled", [&s] { s.prior_conflict_median = false; },
      "test each shape for a conflict against the other shapes' pooled prior, as reports made "
      "before did, not against the median of their estimates (several shapes that vary far "
      "more than the rest can then hide one another)");
  c.add_flag_callback(
      "--prior-conflict-no-floor", [&s] { s.prior_conflict_own_floor = false; },
      "let a shape found in conflict borrow a spread below its own from the other such shapes, as "
      "reports made before did (a shape whose processes read at two levels can then be narrowed "
      "into a change its arms do not show)");
  c.add_flag_callback(
      "--raw-clocks", [&s] { s.clock_normalize = false; },
      "compare GPU arms at the clocks they ran at, not moved to one SM clock per shape");
  c.add_flag_callback(
      "--plain-medians", [&s] { s.spread_ties = false; },
      "take each arm's plain median even where the timer's ticks tie its samples (it then moves "
      "in whole ticks), not the mid-distribution median that reads between them");
}

void add_color_option(CLI::App& c, std::string& color) {
  c.add_option("--color", color,
               "colour the table's verdicts: auto (on a terminal, unless NO_COLOR is set), always "
               "or never")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

void add_report_flags(CLI::App& c, ReportFlags& f) {
  add_stats_flags(c, f.stats);
  CLI::Option* gate =
      c.add_flag("--fail-on-regression", f.fail_on_regression,
                 "exit 5 when a shape regressed beyond the noise band, 6 when a shape is undecided "
                 "(docs/exit-codes.md)");
  // Alone it would do nothing, silently: refused, naming the flag it needs.
  c.add_flag("--allow-undecided", f.allow_undecided,
             "with --fail-on-regression: let unstable and ambiguous shapes pass instead of exit 6")
      ->needs(gate);
  c.add_option("--gate-on", f.gate_on,
               "variants file: gate on this candidate only (repeatable; implies "
               "--fail-on-regression; default: every candidate)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->each([&f](const std::string&) { f.fail_on_regression = true; });
  c.add_flag("-q,--quiet", f.quiet,
             "no progress line and no table (reports are still written; --print still prints)");
  add_color_option(c, f.color);
  c.add_option(
       "--print", f.print,
       "format printed on stdout: terminal | markdown | json | csv | tidy-csv | svg | pr (json for "
       "CI, pr for a pull-request comment)")
      ->capture_default_str()
      ->check(CLI::IsMember(report_formats()))
      ->each([&f](const std::string&) { f.print_asked = true; });
}

void add_report_command(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto flags = std::make_shared<ReportFlags>();
  auto* c = app.add_subcommand("report", "re-render the reports of a run (validates it first)");
  c->add_option("run", *dir, "run directory")->required()->check(CLI::ExistingDirectory);
  add_report_flags(*c, *flags);
  c->add_option("--out", flags->out,
                "write report.{md,json,csv,tidy.csv,svg,pr.md} into this directory (created when "
                "missing) instead of the run directory");
  c->footer(R"(Examples:
  abharness report runs/20261129-120000-abc123 --noise-band 0.02
  abharness report downloaded-run/ --out reports/     # a read-only run: the reports elsewhere
  abharness report downloaded-run/ --print markdown   # a read-only run: printed, nothing written
The run directory is only read; the reports are written into it unless --out names another
directory. A run directory that cannot be written (a downloaded artifact) needs --out or --print.)");
  c->callback([dir, flags, &exit_code] {
    // A live run's reports are its own to write when it ends; a report made of its results so far
    // is printed (a report begun before the run ended and written after would replace them). A
    // run at rest is held while its reports are rewritten, so that no resume starts meanwhile.
    if (!flags->out.empty()) refuse_output_in_run(flags->out, "--out", *dir);
    flags->live = run_is_live(*dir);
    std::optional<RunLock> held;
    if (!flags->live && flags->out.empty() && ::access(dir->c_str(), W_OK) == 0) held.emplace(*dir);
    Plan plan = load_plan(*dir);
    exit_code = conclude(*dir, plan, validate_run(*dir, plan, adaptive_blocks), *flags);
  });
}

}  // namespace abh
