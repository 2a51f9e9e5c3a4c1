// The Slurm commands abharness runs, and what it reads back from them. Every command is an argv run
// without a shell; the batch script is fixed text that executes its own arguments (`exec "$@"`),
// so nothing a user typed is ever parsed by a shell. Output is read in fixed formats only:
// `sbatch --parsable` and `squeue --noheader --format` with '|' between fields.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/launch.hpp"

namespace abh::slurm {

// One job as squeue lists it.
struct JobState {
  std::string id;
  std::string name;
  std::string state;   // squeue's long form: PENDING, RUNNING, COMPLETED, CANCELLED, ...
  std::string node;    // the node list; empty while pending
  std::string reason;  // why it is pending or ended, as Slurm says
  bool operator==(const JobState&) const = default;
};

// True for the states in which a job will not run (any more) without someone requeueing it.
bool is_finished(const std::string& state);

// The job id in `sbatch --parsable` output ("123" or "123;cluster"); Error quoting it otherwise.
std::string parse_job_id(const std::string& parsable);
// The jobs in `squeue -h -o '%i|%j|%T|%N|%r'` output; Error naming a line it cannot read.
std::vector<JobState> parse_squeue(const std::string& text);

// Refuses (UsageError) options that abharness sets itself or that break one-lane-per-job
// (--job-name, --output, --array, --wrap, ...), and malformed values.
void check_options(const SlurmOptions& o);
// `o` with what a lane needs by default: one GPU (--gres=gpu:1) for a CUDA plugin.
SlurmOptions with_defaults(SlurmOptions o, bool cuda);

// The fixed batch script every job runs: it executes its arguments. Written once per run.
std::filesystem::path write_batch_script(const std::filesystem::path& run_dir);

// The sbatch argv of one job: `command` runs on the node; its stdout and stderr go to
// <log_stem>-<job id>.out / .err.
std::vector<std::string> sbatch_argv(const SlurmOptions& o, const std::string& job_name,
                                     const std::filesystem::path& run_dir,
                                     const std::filesystem::path& log_stem,
                                     const std::vector<std::string>& command);

// Runs one Slurm command (sbatch, squeue) and returns what it printed on stdout; Error naming the
// command and quoting its stderr when it failed. The seam between the Slurm launcher and the
// cluster: the real runner starts the command, a unit test's fake answers as Slurm would.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // `run_dir`: the run the command is for.
  virtual std::string run(const std::vector<std::string>& argv,
                          const std::filesystem::path& run_dir) const = 0;
};
// Runs each command as a child process without a shell, within 300 s; its output is kept under
// logs/slurm/ of the run directory.
const CommandRunner& process_runner();

// Runs sbatch; returns the job id. Error with sbatch's message when it refused.
std::string submit(const CommandRunner& slurm, const std::vector<std::string>& sbatch_argv,
                   const std::filesystem::path& run_dir);
// The jobs with these names that Slurm still knows (finished ones until its MinJobAge passes).
std::vector<JobState> query(const CommandRunner& slurm, const std::vector<std::string>& names,
                            const std::filesystem::path& run_dir);

}  // namespace abh::slurm
