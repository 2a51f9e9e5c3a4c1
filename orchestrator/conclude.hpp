// The end of every command that reports: validate the run directory against its plan (fail
// closed), compute statistics, write report.{md,json,csv,tidy.csv,svg,pr.md} and print the terminal
// table.
#pragma once

#include <filesystem>

#include "model/plan.hpp"
#include "provenance/provenance.hpp"
#include "report/gate.hpp"
#include "report/report.hpp"
#include "run_command.hpp"

namespace abh {

// Prints the problems and returns exit_code::kProvenance when there are any; otherwise writes
// the reports and returns gate_exit_code().
int conclude(const std::filesystem::path& run_dir, const Plan& plan, const Validation& v,
             const ReportFlags& flags);

// The exit code of a valid run's report, in this order (docs/exit-codes.md): kRegression when
// --fail-on-regression was given and the gate (report/gate.hpp) found a regression; kIncomplete
// when an arm failed or did not run; kUndecided when --fail-on-regression was given, a shape is
// undecided and --allow-undecided was not; else kSuccess. Names on stderr every shape that
// decided it, and why.
int gate_exit_code(const Report& report, const Validation& v, const std::filesystem::path& run_dir,
                   const ReportFlags& flags);
// The same over several comparisons (a variants file's candidates, those of --gate-on): exit 5
// when any of them regressed, 6 when any is undecided; shapes named with their candidate.
struct NamedGate {
  std::string candidate;  // "" for a two-variant run
  GateResult result;
};
int gate_exit_code(const std::vector<NamedGate>& gates, const Validation& v,
                   const std::filesystem::path& run_dir, const ReportFlags& flags);

// The problems of a validation that failed, then what to do about them (repair_hints), naming
// `run_dir` in the commands it suggests.
void print_problems(const Validation& v, const std::filesystem::path& run_dir);

// Whether the terminal report is coloured: --color always, or auto on a terminal unless NO_COLOR
// is set to anything non-empty (https://no-color.org).
bool use_color(const std::string& flag, bool tty, const char* no_color);

}  // namespace abh
