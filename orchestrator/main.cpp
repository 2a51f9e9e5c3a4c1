// abharness: is the candidate revision of a kernel faster than the baseline, on these shapes, on
// this machine — and by how much? See README.md and docs/.
#include <CLI/CLI.hpp>
#include <iostream>

#include "build_info.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "run_command.hpp"
#include "system/error.hpp"
#include "usage_hints.hpp"

int main(int argc, char** argv) {
  using namespace abh;
  set_invocation_argv(argc, argv);
  CLI::App app{
      "abharness — A/B/A benchmarks of two git revisions of a kernel, with provenance you can "
      "verify"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text(build_info()));
  // Every command's help on one page: what the man page (help2man) is made from.
  app.set_help_all_flag("--help-all", "print the help of every command");
  app.footer(R"(Examples:
  abharness run --baseline main --candidate WORKTREE --grid shapes.json
  abharness resume runs/<id>          # run only what is missing or failed
  abharness verify runs/<id>          # re-check every result; prints the result-set digest
  abharness report runs/<id>          # re-render report.{md,json,csv,tidy.csv,svg,pr.md}
  abharness compare runs/h100 runs/h200   # finished runs side by side (not interleaved)
  abharness export runs/<id> --format bmf # for Bencher (or pytest-benchmark's JSON)
  abharness history runs/* --out history/ # an HTML page: each shape's speedup over commits
  abharness doctor                    # binaries, toolchains, GPUs, clocks and throttling
  abharness grid --model llama-3.1-8b --precision bf16 --micro-batch 1 --seq 4096 -o shapes.json
Exit codes: 0 success, 1 error, 2 usage, 3 provenance failure, 4 incomplete sweep, 5 regression
and 6 undecided (both with --fail-on-regression; docs/exit-codes.md). `abharness help <command>`
(or `abharness <command> --help`) shows each command's options.)");
  int code = exit_code::kSuccess;
  add_run_command(app, code);
  add_resume_command(app, code);
  add_verify_command(app, code);
  add_report_command(app, code);
  add_doctor_command(app, code);
  add_compare_command(app, code);
  add_export_command(app, code);
  add_bisect_command(app, code);
  add_history_command(app, code);
  add_completion_command(app);
  add_lane_command(app, code);
  add_grid_command(app);
  add_roofline_command(app);
  try {
    std::vector<std::string> args = expand_help_verb(app, {argv, argv + argc});
    refuse_empty_values(args);
    std::vector<const char*> args_c;
    for (const std::string& a : args) args_c.push_back(a.c_str());
    app.parse(static_cast<int>(args_c.size()), args_c.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc != 0) std::cerr << did_you_mean(app);
    return rc == 0 ? 0 : exit_code::kUsage;
  } catch (const ProvenanceError& e) {
    std::cerr << "abharness: provenance validation FAILED: " << e.what() << std::endl;
    return exit_code::kProvenance;
  } catch (const UsageError& e) {
    std::cerr << "abharness: " << e.what() << std::endl;
    return exit_code::kUsage;
  } catch (const std::exception& e) {
    std::cerr << "abharness: error: " << e.what() << std::endl;
    return exit_code::kError;
  }
  return code;
}
