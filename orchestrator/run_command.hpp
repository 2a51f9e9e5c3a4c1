// The commands that run and report sweeps: `abharness run` plans a sweep and runs it
// (cmd_run.cpp), `resume` runs what is missing (cmd_resume.cpp), `verify` checks every result
// against the plan (cmd_verify.cpp), `report` re-renders the reports (cmd_report.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "planner.hpp"
#include "stats/statistics.hpp"
#include "sweep.hpp"

namespace abh {

// Options that shape the statistics and the report; shared by run, resume and report.
struct ReportFlags {
  StatsOptions stats;  // --noise-band, --confidence, --resamples, --seed, --raw-clocks
  bool fail_on_regression = false;
  bool allow_undecided = false;  // with --fail-on-regression: undecided shapes pass (exit 0)
  // --gate-on NAME (repeatable): the gate judges these candidates of a variants file only; it
  // implies --fail-on-regression. Empty: every candidate.
  std::vector<std::string> gate_on;
  bool quiet = false;
  std::string color = "auto";      // auto | always | never
  std::string print = "terminal";  // the format printed on stdout: any report format
  bool print_asked = false;        // --print was given: --quiet does not silence it
  // `report --out`: the directory the report files go to; empty: the run directory.
  std::string out;
  // Another abharness is measuring the run (`report` or `verify` beside a live run): its arms yet
  // to be measured are not failures, and its own reports, written when it ends, are not replaced.
  bool live = false;
};
void add_report_flags(CLI::App& cmd, ReportFlags& f);  // cmd_report.cpp
// --color auto|always|never, for every command that prints a table with verdicts.
void add_color_option(CLI::App& cmd, std::string& color);
// --noise-band, --confidence, --resamples, --seed, --raw-clocks alone (also for `compare`).
void add_stats_flags(CLI::App& cmd, StatsOptions& s);

// --timer, --timing, --stopping and the other measurement settings (run, bisect).
void add_measure_flags(CLI::App& cmd, MeasureSettings& s);

// The exact command line, recorded in the plan and quoted by reports.
void set_invocation_argv(int argc, char** argv);
const std::vector<std::string>& invocation_argv();

// How a sweep shows its progress under these flags (a redrawn line on a terminal).
SweepOptions sweep_options(const ReportFlags& f);

// Reopens a run directory, runs the arms without a valid result and reports. With `requested`
// (`run --resume` and its flags), the flags must describe the plan's sweep.
int resume_run(const std::filesystem::path& run_dir, const ReportFlags& flags,
               const PlanRequest* requested);

// Plans a new sweep in runs_root/<id> (a fresh id when empty) and runs it: `abharness run`, and
// each probe of `abharness bisect`. Throws BuildFailed (variants.hpp) when a revision does not
// build, leaving the directory with the build's log.
int run_new_sweep(const PlanRequest& request, const std::filesystem::path& runs_root,
                  std::string id, const ReportFlags& report);
// `abharness bisect`'s resume and verify, which `resume` and `verify` hand a bisect directory to
// (cmd_bisect.cpp).
int resume_bisect(const std::filesystem::path& dir, const ReportFlags& flags);
int verify_bisect(const std::filesystem::path& dir);

void add_run_command(CLI::App& app, int& exit_code);
void add_bisect_command(CLI::App& app, int& exit_code);
void add_resume_command(CLI::App& app, int& exit_code);
void add_verify_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
void add_doctor_command(CLI::App& app, int& exit_code);  // cmd_doctor.cpp
void add_lane_command(CLI::App& app, int& exit_code);    // cmd_lane.cpp: inside a Slurm job

}  // namespace abh
