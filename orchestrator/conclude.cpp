#include "conclude.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "exit_codes.hpp"
#include "report/gate.hpp"
#include "report/report_builder.hpp"
#include "report/report_render.hpp"
#include "stats/roofline.hpp"
#include "system/data_dir.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {
namespace fs = std::filesystem;

bool use_color(const std::string& flag, bool tty, const char* no_color) {
  if (flag == "always") return true;
  // https://no-color.org: any non-empty NO_COLOR turns colour off unless it is asked for.
  return flag == "auto" && tty && !(no_color && *no_color);
}

void print_problems(const Validation& v) {
  std::cerr << "abharness: provenance validation FAILED (" << v.problems.size()
            << " problem(s)); no report is produced from this run:\n";
  for (const auto& p : v.problems) std::cerr << "  " << p.describe() << "\n";
}

namespace {

void print_shapes(const std::vector<GateShape>& shapes) {
  for (const auto& s : shapes) std::cerr << "  " << s.shape << ": " << s.reason << "\n";
}

// Where the report files go: --out (created when missing), else the run directory. A run directory
// that cannot be written (a downloaded artifact, a read-only mount) is only read: with --print the
// report is printed and nothing written, which stderr says; without --print or --out that is an
// error naming both, since the user would otherwise get nothing.
std::optional<fs::path> report_dir(const fs::path& run_dir, const ReportFlags& flags) {
  if (!flags.out.empty()) {
    std::error_code ec;
    fs::create_directories(flags.out, ec);
    if (ec)
      throw Error("cannot create --out directory " + flags.out + ": " + ec.message() +
                  ": name a directory you can write");
    return fs::path(flags.out);
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

std::optional<fs::path> write_reports(const Report& report, const fs::path& run_dir,
                                      const ReportFlags& flags) {
  const std::optional<fs::path> dir = report_dir(run_dir, flags);
  if (!dir) return dir;
  for (const auto& f : report_format_table())
    if (f.name != "terminal") {
      if (flags.out.empty())
        RunDirFs(run_dir).write_atomic("report." + f.extension, f.render(report, {}));
      else
        write_file_atomic(*dir / ("report." + f.extension), f.render(report, {}));
    }
  return dir;
}

}  // namespace

int gate_exit_code(const Report& report, const Validation& v, const fs::path& run_dir,
                   const ReportFlags& flags) {
  const GateResult g = judge_gate(report);
  // A regression is the decisive fact for CI, even when other shapes failed or are undecided.
  if (flags.fail_on_regression && !g.regressions.empty()) {
    std::cerr << "abharness: exit " << exit_code::kRegression << ": " << g.regressions.size()
              << " shape(s) regressed beyond the noise band (--fail-on-regression):\n";
    print_shapes(g.regressions);
    return exit_code::kRegression;
  }
  if (!v.complete()) {
    int missing = 0;
    for (const auto& o : v.outcomes) missing += o.result ? 0 : 1;
    std::cerr << "abharness: exit " << exit_code::kIncomplete << ": sweep incomplete: " << missing
              << " arm(s) failed or did not run; their logs are under "
              << (run_dir / "logs").string() << "; `abharness resume " << run_dir.string()
              << "` re-runs them\n";
    print_shapes(g.failed);
    return exit_code::kIncomplete;
  }
  if (flags.fail_on_regression && !g.undecided.empty()) {
    if (flags.allow_undecided) {
      std::cerr << "abharness: " << g.undecided.size()
                << " shape(s) undecided, passed because of --allow-undecided:\n";
      print_shapes(g.undecided);
      return exit_code::kSuccess;
    }
    std::cerr << "abharness: exit " << exit_code::kUndecided << ": " << g.undecided.size()
              << " shape(s) could not be decided, so a regression is not ruled out "
                 "(--fail-on-regression fails closed; more blocks decide them: --rounds or "
                 "--until-decided; --allow-undecided passes them):\n";
    print_shapes(g.undecided);
    return exit_code::kUndecided;
  }
  return exit_code::kSuccess;
}

int conclude(const fs::path& run_dir, const Plan& plan, const Validation& v,
             const ReportFlags& flags) {
  if (!v.problems.empty()) {
    print_problems(v);
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
  Report report = build_report(plan, v.outcomes, flags.stats, v.result_set_digest, sol);
  const std::optional<fs::path> written = write_reports(report, run_dir, flags);
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
