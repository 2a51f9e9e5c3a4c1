// The end of every command that reports: validate the run directory against its plan (fail
// closed), compute statistics, write report.{md,json,csv,svg} and print the terminal table.
#pragma once

#include <filesystem>

#include "model/plan.hpp"
#include "provenance/provenance.hpp"
#include "run_command.hpp"

namespace abh {

// Prints the problems and returns exit_code::kProvenance when there are any; otherwise writes
// the reports and returns kSuccess, kIncomplete or kRegression.
int conclude(const std::filesystem::path& run_dir, const Plan& plan, const Validation& v,
             const ReportFlags& flags);

void print_problems(const Validation& v);

// Whether the terminal report is coloured: --color always, or auto on a terminal unless NO_COLOR
// is set to anything non-empty (https://no-color.org).
bool use_color(const std::string& flag, bool tty, const char* no_color);

}  // namespace abh
