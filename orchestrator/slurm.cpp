#include "slurm.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "system/error.hpp"
#include "system/json_io.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"
#include "system/text.hpp"

namespace abh::slurm {
namespace fs = std::filesystem;

namespace {

// sbatch options abharness sets itself (a lane is one job, one node, with its logs where the run
// directory says), with the flag that replaces the few a user does choose.
struct Reserved {
  const char* short_form;  // nullptr: none
  const char* long_form;
  const char* instead;
};
constexpr Reserved kReserved[] = {
    {"-J", "--job-name", "abharness names each job after the run and its lane"},
    {"-o", "--output", "each job's output goes to <run>/logs/"},
    {"-e", "--error", "each job's output goes to <run>/logs/"},
    {"-D", "--chdir", "each job runs in the run directory"},
    {nullptr, "--open-mode", "job logs are appended to, so a requeued job keeps its first log"},
    {nullptr, "--parsable", "abharness reads the job id itself"},
    {"-a", "--array", "each lane is one job"},
    {nullptr, "--wrap", "the batch script is abharness's own"},
    {"-N", "--nodes", "a lane runs on one node"},
    {"-p", "--partition", "use --slurm-partition"},
    {"-A", "--account", "use --slurm-account"},
    {"-t", "--time", "use --slurm-time"},
    {nullptr, "--gres", "use --slurm-gres"},
};

bool matches(const std::string& arg, const Reserved& r) {
  const std::string l = r.long_form;
  if (arg == l || arg.rfind(l + "=", 0) == 0) return true;
  return r.short_form && arg.rfind(r.short_form, 0) == 0;
}

// A path inside an sbatch filename pattern: '%' is Slurm's escape character.
std::string pattern_path(const fs::path& p) {
  std::string s = p.string(), out;
  if (s.find('\\') != std::string::npos)
    throw UsageError("the run directory " + s +
                     " contains a backslash, which Slurm reads in log file names: use "
                     "--runs-root without one");
  for (char c : s) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

// Runs a Slurm command; returns its stdout. Error naming the command and quoting its stderr. Its
// output goes to logs/slurm/ of the run directory, created afresh without following links.
std::string run_slurm(const std::vector<std::string>& argv, const fs::path& run_dir) {
  const RunDirFs run(run_dir);
  const fs::path out = fs::path("logs") / "slurm" / (argv.at(0) + ".out");
  const fs::path err = fs::path("logs") / "slurm" / (argv.at(0) + ".err");
  SpawnSpec spec;
  spec.argv = argv;
  {
    UniqueFd out_fd = run.create(out), err_fd = run.create(err);
    spec.stdout_fd = out_fd.get();
    spec.stderr_fd = err_fd.get();
    // Slurm's commands retry an unreachable controller for a while themselves; this bounds that.
    spec.timeout_s = 300;
    const ExitStatus st = run_process(spec);
    if (!st.ok())
      throw Error(argv[0] + " failed (" + st.describe() + "): " + trimmed(run.read(err, 1u << 16)));
  }
  return run.read(out, 16u << 20);
}

class ProcessRunner : public CommandRunner {
 public:
  std::string run(const std::vector<std::string>& argv, const fs::path& run_dir) const override {
    return run_slurm(argv, run_dir);
  }
};

}  // namespace

const CommandRunner& process_runner() {
  static const ProcessRunner r;
  return r;
}

bool is_finished(const std::string& state) {
  static const char* const kFinished[] = {"COMPLETED",    "CANCELLED", "FAILED",    "TIMEOUT",
                                          "NODE_FAIL",    "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY",
                                          "SPECIAL_EXIT", "REVOKED",   "DEADLINE"};
  return std::any_of(std::begin(kFinished), std::end(kFinished),
                     [&](const char* s) { return state == s; });
}

std::string parse_job_id(const std::string& parsable) {
  std::string s = trimmed(parsable);
  // A last line "123" or "123;cluster": sbatch may print warnings before it.
  if (auto nl = s.rfind('\n'); nl != std::string::npos) s = s.substr(nl + 1);
  std::string id = s.substr(0, s.find(';'));
  if (id.empty() || id.size() > 20 ||
      !std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw Error("sbatch --parsable printed '" + trimmed(parsable) + "', not a job id");
  return id;
}

std::vector<JobState> parse_squeue(const std::string& text) {
  std::vector<JobState> jobs;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (trimmed(line).empty()) continue;
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, '|');) f.push_back(trimmed(x));
    if (line.back() == '|') f.push_back("");
    if (f.size() != 5 || f[0].empty())
      throw Error("squeue printed '" + line + "', not 'id|name|state|nodes|reason'");
    JobState j{f[0], f[1], f[2], f[3], f[4]};
    if (j.node == "(null)") j.node.clear();
    jobs.push_back(std::move(j));
  }
  return jobs;
}

void check_options(const SlurmOptions& o) {
  if (o.lanes < 1) throw UsageError("--slurm-lanes must be at least 1");
  for (const auto& arg : o.sbatch_args) {
    if (arg.size() < 2 || arg[0] != '-')
      throw UsageError("--slurm-sbatch-arg '" + arg +
                       "': give one sbatch option with its value attached, e.g. "
                       "--slurm-sbatch-arg=--qos=high");
    for (const auto& r : kReserved)
      if (matches(arg, r))
        throw UsageError("--slurm-sbatch-arg '" + arg + "' sets " + r.long_form + ": " + r.instead);
  }
}

SlurmOptions with_defaults(SlurmOptions o, bool cuda) {
  if (cuda && o.gres.empty()) o.gres = "gpu:1";
  return o;
}

fs::path write_batch_script(const fs::path& run_dir) {
  const fs::path rel = fs::path("launcher") / "job.sbatch";
  const RunDirFs run(run_dir);
  run.write_atomic(rel,
                   "#!/bin/sh\n"
                   "# Written by abharness: every Slurm job of this run executes its own "
                   "arguments,\n"
                   "# passed by sbatch as an argv; no shell code is built from them.\n"
                   "exec \"$@\"\n");
  // Executable, so that it also runs as itself (by hand, or where a site's Slurm execs it); set
  // through a descriptor opened without following links, like every write here.
  if (::fchmod(run.open_read(rel).get(), 0755) != 0)
    throw Error("cannot make " + run.path(rel).string() + " executable: " + std::strerror(errno));
  return run_dir / rel;
}

std::vector<std::string> sbatch_argv(const SlurmOptions& o, const std::string& job_name,
                                     const fs::path& run_dir, const fs::path& log_stem,
                                     const std::vector<std::string>& command) {
  const std::string logs = pattern_path(log_stem);
  std::vector<std::string> a = {"sbatch",
                                "--parsable",
                                "--job-name=" + job_name,
                                "--chdir=" + run_dir.string(),
                                "--output=" + logs + "-%j.out",
                                "--error=" + logs + "-%j.err",
                                "--open-mode=append",
                                "--nodes=1",
                                "--ntasks=1"};
  if (!o.partition.empty()) a.push_back("--partition=" + o.partition);
  if (!o.account.empty()) a.push_back("--account=" + o.account);
  if (!o.time.empty()) a.push_back("--time=" + o.time);
  if (!o.gres.empty()) a.push_back("--gres=" + o.gres);
  a.insert(a.end(), o.sbatch_args.begin(), o.sbatch_args.end());
  a.push_back((run_dir / "launcher" / "job.sbatch").string());
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

std::string submit(const CommandRunner& slurm, const std::vector<std::string>& argv,
                   const fs::path& run_dir) {
  return parse_job_id(slurm.run(argv, run_dir));
}

std::vector<JobState> query(const CommandRunner& slurm, const std::vector<std::string>& names,
                            const fs::path& run_dir) {
  if (names.empty()) return {};
  return parse_squeue(
      slurm.run({"squeue", "--noheader", "--states=all", "--format=%i|%j|%T|%N|%r",
                 "--user=" + std::to_string(::getuid()), "--name=" + join(names, ",")},
                run_dir));
}

}  // namespace abh::slurm
