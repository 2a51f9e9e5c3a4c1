#include "conclude.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "exit_codes.hpp"
#include "provenance/repair_hints.hpp"
#include "report/gate.hpp"
#include "report/report_builder.hpp"
#include "report/report_render.hpp"
#include "report/variants_report.hpp"
#include "stats/roofline.hpp"
#include "system/data_dir.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"
#include "system/text.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;

bool use_color(const std::string& flag, bool tty, const char* no_color) {
  if (flag == "always") return true;
  // https://no-color.org: any non-empty NO_COLOR turns colour off unless it is asked for.
  return flag == "auto" && tty && !(no_color && *no_color);
}

void print_problems(const Validation& v, const fs::path& run_dir) {
  std::cerr << "abharness: provenance validation FAILED (" << v.problems.size()
            << " problem(s)); no report is produced from this run:\n";
  for (const auto& p : v.problems) std::cerr << "  " << p.describe() << "\n";
  for (const auto& p : v.problems)
    if (p.rule == "plugin-file")
      if (const std::string advice = restore_advice(run_dir, p.file, p.expected); !advice.empty())
        std::cerr << "what to do (" << p.file << "): " << advice << "\n";
  for (const std::string& hint : repair_hints(v, quote(run_dir.string())))
    std::cerr << "what to do: " << hint << "\n";
}

namespace {

// Where the report files go: --out (created when missing), else the run directory. A run directory
// that cannot be written (a downloaded artifact, a read-only mount) is only read: with --print the
// report is printed and nothing written, which stderr says; without --print or --out that is an
// error naming both, since the user would otherwise get nothing.
std::optional<fs::path> report_dir(const fs::path& run_dir, const ReportFlags& flags) {
  if (!flags.out.empty()) {
    std::error_code ec;
    fs::create_directories(flags.out, ec);
    if (ec)
      throw UsageError("cannot create --out directory " + flags.out + ": " + ec.message() +
                       ": name a directory you can write");
    return fs::path(flags.out);
  }
  if (flags.live) {
    std::cerr << "abharness: " << run_dir.string()
              << " is live (another abharness is measuring it): this report of its results so "
                 "far is printed, not written; the run writes its own when it ends (--out DIR "
                 "writes this one elsewhere)\n";
    return std::nullopt;
  }
  if (::access(run_dir.c_str(), W_OK) == 0) return run_dir;
  if (flags.print_asked) {
    std::cerr << "abharness: " << run_dir.string()
              << " is read-only: the reports are printed only, not written (--out DIR writes "
                 "them elsewhere)\n";
    return std::nullopt;
  }
  throw UsageError("cannot write the reports into " + run_dir.string() +
                   ": it is read-only (a downloaded run?): --out DIR writes them elsewhere, "
                   "--print FORMAT prints one on stdout");
}

// Writes report.<extension> of every format of `table` but the terminal's, into the run
// directory (without following links) or into --out; returns where, or nothing when the reports
// were not written (report_dir). `table` is report_format_table() or variants_format_table().
template <typename FormatTable, typename Document>
std::optional<fs::path> write_reports(const FormatTable& table, const Document& report,
                                      const fs::path& run_dir, const ReportFlags& flags) {
  const std::optional<fs::path> dir = report_dir(run_dir, flags);
  if (!dir) return dir;
  for (const auto& f : table)
    if (f.name != "terminal") {
      if (flags.out.empty())
        RunDirFs(run_dir).write_atomic("report." + f.extension, f.render(report, {}));
      else
        write_file_atomic(*dir / ("report." + f.extension), f.render(report, {}));
    }
  return dir;
}

// Each gated comparison's shapes of one kind, prefixed with the candidate's name when there are
// several candidates.
std::size_t count_of(const std::vector<NamedGate>& gates,
                     std::vector<GateShape> GateResult::*kind) {
  std::size_t n = 0;
  for (const auto& g : gates) n += (g.result.*kind).size();
  return n;
}

void print_named(const std::vector<NamedGate>& gates, std::vector<GateShape> GateResult::*kind) {
  for (const auto& g : gates)
    for (const auto& s : g.result.*kind)
      std::cerr << "  " << (g.candidate.empty() ? "" : g.candidate + " ") << s.shape << ": "
                << s.reason << "\n";
}

}  // namespace

int gate_exit_code(const Report& report, const Validation& v, const fs::path& run_dir,
                   const ReportFlags& flags) {
  return gate_exit_code(std::vector<NamedGate>{{"", judge_gate(report)}}, v, run_dir, flags);
}

int gate_exit_code(const std::vector<NamedGate>& gates, const Validation& v,
                   const fs::path& run_dir, const ReportFlags& flags) {
  // A regression is the decisive fact for CI, even when other shapes failed or are undecided.
  const std::size_t regressions = count_of(gates, &GateResult::regressions);
  if (flags.fail_on_regression && regressions > 0) {
    std::cerr << "abharness: exit " << exit_code::kRegression << ": " << regressions
              << " shape(s) regressed beyond the noise band (--fail-on-regression):\n";
    print_named(gates, &GateResult::regressions);
    return exit_code::kRegression;
  }
  if (!v.complete()) {
    int missing = 0;
    for (const auto& o : v.outcomes) missing += o.result ? 0 : 1;
    if (flags.live) {
      std::cerr << "abharness: exit " << exit_code::kIncomplete << ": " << missing
                << " arm(s) without a result yet: the run is still measuring\n";
      return exit_code::kIncomplete;
    }
    std::cerr << "abharness: exit " << exit_code::kIncomplete << ": sweep incomplete: " << missing
              << " arm(s) failed or did not run; their logs are under "
              << (run_dir / "logs").string() << "; `abharness resume " << run_dir.string()
              << "` re-runs them\n";
    print_named(gates, &GateResult::failed);
    return exit_code::kIncomplete;
  }
  const std::size_t undecided = count_of(gates, &GateResult::undecided);
  if (flags.fail_on_regression && undecided > 0) {
    if (flags.allow_undecided) {
      std::cerr << "abharness: " << undecided
                << " shape(s) undecided, passed because of --allow-undecided:\n";
      print_named(gates, &GateResult::undecided);
      return exit_code::kSuccess;
    }
    std::cerr << "abharness: exit " << exit_code::kUndecided << ": " << undecided
              << " shape(s) could not be decided, so a regression is not ruled out "
                 "(--fail-on-regression fails closed; more blocks decide them: --rounds or "
                 "--until-decided; --allow-undecided passes them):\n";
    print_named(gates, &GateResult::undecided);
    return exit_code::kUndecided;
  }
  return exit_code::kSuccess;
}

namespace {

// The candidates the gate judges: those of --gate-on, or all. A name that is not a candidate is
// the user's to fix.
std::vector<NamedGate> candidate_gates(const VariantsReport& r, const ReportFlags& flags) {
  std::vector<std::string> names;
  for (const auto& c : r.candidates) names.push_back(c.name);
  for (const auto& g : flags.gate_on)
    if (std::find(names.begin(), names.end(), g) == names.end())
      throw UsageError("--gate-on " + g + ": not a candidate of this run (candidates: " +
                       join(names, ", ") + "; the baseline " + r.baseline + " is not gated)");
  std::vector<NamedGate> gates;
  for (const auto& c : r.candidates)
    if (flags.gate_on.empty() ||
        std::find(flags.gate_on.begin(), flags.gate_on.end(), c.name) != flags.gate_on.end())
      gates.push_back({c.name, judge_gate(c.report)});
  return gates;
}

// The reports of a variants run: report.{md,pr.md,csv,json} and the terminal matrix.
int conclude_variants(const fs::path& run_dir, const Plan& plan, const Validation& v,
                      const ReportFlags& flags, const RooflineContext& sol) {
  const VariantsReport report =
      build_variants_report(plan, v.outcomes, flags.stats, v.result_set_digest, sol);
  const std::vector<NamedGate> gates = candidate_gates(report, flags);
  const std::optional<fs::path> dir =
      write_reports(variants_format_table(), report, run_dir, flags);
  RenderOptions term;
  term.color = use_color(flags.color, ::isatty(STDOUT_FILENO), std::getenv("NO_COLOR"));
  if (!flags.quiet || flags.print_asked) std::cout << render_variants(report, flags.print, term);
  if (dir)
    std::cerr << "reports: " << (*dir / "report.md").string() << " (.json .csv .tidy.csv .pr.md)\n";
  std::cerr << "result-set digest: " << v.result_set_digest << "\n";
  return gate_exit_code(gates, v, run_dir, flags);
}

}  // namespace

int conclude(const fs::path& run_dir, const Plan& plan, const Validation& v,
             const ReportFlags& flags) {
  if (!v.problems.empty()) {
    print_problems(v, run_dir);
    return exit_code::kProvenance;
  }
  validate(flags.stats);
  // Speed of light needs data/gpus.json; a table that cannot be found or read costs the SOL
  // column only, and the report says why.
  GpuTable table;
  RooflineContext sol;
  try {
    table = load_gpu_table(resolve_data_dir() / "gpus.json");
    sol.table = &table;
  } catch (const Error& e) {
    sol.table_error = e.what();
  }
  if (is_variants_plan(plan)) return conclude_variants(run_dir, plan, v, flags, sol);
  if (!flags.gate_on.empty() && flags.gate_on != std::vector<std::string>{"candidate"})
    throw UsageError(
        "--gate-on: this run compares one candidate (named candidate); --gate-on "
        "chooses among the candidates of a variants file (docs/variants.md)");
  Report report = build_report(plan, v.outcomes, flags.stats, v.result_set_digest, sol);
  const std::optional<fs::path> written =
      write_reports(report_format_table(), report, run_dir, flags);
  RenderOptions term;
  term.color = use_color(flags.color, ::isatty(STDOUT_FILENO), std::getenv("NO_COLOR"));
  // Machine-readable output goes to stdout alone (progress and messages are on stderr), so
  // `abharness run ... --print json > report.json` works in CI. What --print asks for is printed
  // even with --quiet, which silences the rest.
  if (!flags.quiet || flags.print_asked) std::cout << render(report, flags.print, term);
  if (written)
    std::cerr << "reports: " << (*written / "report.md").string()
              << " (.json .csv .tidy.csv .svg .pr.md)\n";
  std::cerr << "result-set digest: " << v.result_set_digest << "\n";
  return gate_exit_code(report, v, run_dir, flags);
}

}  // namespace abh
