// `abharness run` and `abharness resume`: plan a sweep (or reopen one), run what is missing,
// validate every result, and report.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace abh {

// Options that shape the statistics and the report; shared by run, resume and report.
struct ReportFlags {
  double noise_band = 0.01;
  double confidence = 0.95;
  int resamples = 2000;
  unsigned long long seed = 1;
  bool raw_clocks = false;  // compare raw times, not at one SM clock
  bool fail_on_regression = false;
  bool quiet = false;
  std::string color = "auto";      // auto | always | never
  std::string print = "terminal";  // the format printed on stdout: any report format
};
void add_report_flags(CLI::App& cmd, ReportFlags& f);

// The exact command line, recorded in the plan and quoted by reports.
void set_invocation_argv(int argc, char** argv);
const std::vector<std::string>& invocation_argv();

void add_run_command(CLI::App& app, int& exit_code);
void add_resume_command(CLI::App& app, int& exit_code);
void add_verify_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_doctor_command(CLI::App& app, int& exit_code);  // cmd_doctor.cpp

}  // namespace abh
