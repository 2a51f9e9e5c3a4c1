// `abharness export RUN --format bmf|pytest-benchmark`: a finished run in a format that
// continuous-benchmarking tools read (report/export.hpp, docs/export.md). The run is validated
// against its plan first, as `verify` does: a run that fails is refused (exit 3) and nothing is
// exported. The numbers are the report's, computed with the given statistics options.
#include <iostream>

#include "commands.hpp"
#include "conclude.hpp"
#include "exit_codes.hpp"
#include "paths.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "report/export.hpp"
#include "report/report_builder.hpp"
#include "report/variants_report.hpp"
#include "run_command.hpp"
#include "system/json_io.hpp"

namespace abh {
namespace {

struct ExportFlags {
  std::string run;
  std::string format;
  std::string out;  // empty: stdout
  StatsOptions stats;
};

int run_export(const ExportFlags& f) {
  if (!f.out.empty()) refuse_output_in_run(f.out, "--out");
  validate(f.stats);
  const ExportFormat& format = export_format(f.format);
  const Plan plan = load_plan(f.run);
  require_two_variant_plan(plan, "export");
  const Validation v = validate_run(f.run, plan, adaptive_blocks);
  if (!v.problems.empty()) {
    std::cerr << "abharness: export: run " << f.run << " (" << plan.run_id
              << ") failed provenance validation; nothing is exported:\n";
    print_problems(v, f.run);
    return exit_code::kProvenance;
  }
  const Report report = build_report(plan, v.outcomes, f.stats, v.result_set_digest);
  const Export e = format.render(report, v.outcomes);
  for (const std::string& note : e.notes) std::cerr << "abharness: export: " << note << "\n";
  if (f.out.empty()) {
    std::cout << e.text;
  } else {
    write_file_atomic(f.out, e.text);
    std::cerr << "export: " << f.out << " (" << format.name << ")\n";
  }
  return exit_code::kSuccess;
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<ExportFlags>();
  auto* c = app.add_subcommand(
      "export", "write a run's results for a continuous-benchmarking tool (validates it first)");
  c->add_option("run", f->run, "run directory")->required()->check(CLI::ExistingDirectory);
  c->add_option("--format", f->format, export_formats_help())
      ->required()
      ->check(CLI::IsMember(export_formats()));
  c->add_option("-o,--out", f->out, "write to this file instead of stdout");
  add_stats_flags(*c, f->stats);
  c->footer(R"(Examples:
  abharness export runs/<id> --format bmf > bmf.json && bencher run --file bmf.json ...
  abharness export runs/<id> --format pytest-benchmark -o 0001_pr.json
Shapes without a speedup (a failed arm) are left out, each named on stderr. docs/export.md says
what each format holds.)");
  c->callback([f, &exit_code] { exit_code = run_export(*f); });
}

}  // namespace abh
