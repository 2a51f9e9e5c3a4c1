#include "conclude.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "exit_codes.hpp"
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
  for (const auto& f : report_format_table())
    if (f.name != "terminal")
      RunDirFs(run_dir).write_atomic("report." + f.extension, f.render(report, {}));
  RenderOptions term;
  term.color = use_color(flags.color, ::isatty(STDOUT_FILENO), std::getenv("NO_COLOR"));
  // Machine-readable output goes to stdout alone (progress and messages are on stderr), so
  // `abharness run ... --print json > report.json` works in CI.
  if (!flags.quiet) std::cout << render(report, flags.print, term);
  std::cerr << "reports: " << (run_dir / "report.md").string() << " (.json .csv .svg .pr.md)\n"
            << "result-set digest: " << v.result_set_digest << "\n";
  if (!v.complete()) {
    int missing = 0;
    for (const auto& o : v.outcomes) missing += o.result ? 0 : 1;
    std::cerr << "abharness: sweep incomplete: " << missing
              << " arm(s) failed or did not run; their logs are under "
              << (run_dir / "logs").string() << "; `abharness resume " << run_dir.string()
              << "` re-runs them\n";
    return exit_code::kIncomplete;
  }
  if (flags.fail_on_regression && count_regressions(report) > 0) {
    std::cerr << "abharness: " << count_regressions(report)
              << " shape(s) regressed beyond the noise band (--fail-on-regression)\n";
    return exit_code::kRegression;
  }
  return exit_code::kSuccess;
}

}  // namespace abh
