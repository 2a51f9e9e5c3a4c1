// The Slurm client (orchestrator/slurm.hpp): the argv of every job, the options a user may not set,
// and what is read back from sbatch and squeue. The real Slurm is driven end to end by
// tests/integration/slurm.sh; here each parser and builder is pinned down, including the batch
// script's promise that arguments reach the command unparsed by any shell.
#include <doctest/doctest.h>

#include "slurm.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

TEST_CASE("slurm: parse_job_id reads sbatch --parsable, cluster suffix and warnings included") {
  CHECK(slurm::parse_job_id("123\n") == "123");
  CHECK(slurm::parse_job_id("4567;cluster-a\n") == "4567");
  CHECK(slurm::parse_job_id("sbatch: warning: something\n89\n") == "89");
  CHECK(test::error_of([] { slurm::parse_job_id("Submitted batch job 12\n"); }) ==
        "sbatch --parsable printed 'Submitted batch job 12', not a job id");
  CHECK(test::error_of([] { slurm::parse_job_id(""); }) ==
        "sbatch --parsable printed '', not a job id");
}

TEST_CASE("slurm: parse_squeue reads the fixed format and refuses any other") {
  auto jobs = slurm::parse_squeue(
      "12|abh-r-lane0|RUNNING|node-1|None\n"
      "13|abh-r-lane1|PENDING||Resources\n\n");
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0] == slurm::JobState{"12", "abh-r-lane0", "RUNNING", "node-1", "None"});
  CHECK(jobs[1].node.empty());
  CHECK(jobs[1].reason == "Resources");
  CHECK(slurm::parse_squeue("").empty());
  CHECK(test::error_of([] { slurm::parse_squeue("12 abh RUNNING\n"); }) ==
        "squeue printed '12 abh RUNNING', not 'id|name|state|nodes|reason'");
}

TEST_CASE("slurm: finished states are the ones no job comes back from by itself") {
  for (const char* s : {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                        "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE"})
    CHECK(slurm::is_finished(s));
  for (const char* s :
       {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "REQUEUED", "SUSPENDED", "RESIZING"})
    CHECK_FALSE(slurm::is_finished(s));
}

TEST_CASE("slurm: options abharness sets itself are refused, naming the flag to use") {
  SlurmOptions o;
  CHECK_NOTHROW(slurm::check_options(o));
  o.sbatch_args = {"--qos=high", "--exclusive", "-C", "h200"};
  CHECK(test::usage_error_of([&] { slurm::check_options(o); }) ==
        "--slurm-sbatch-arg 'h200': give one sbatch option with its value attached, e.g. "
        "--slurm-sbatch-arg=--qos=high");
  for (const std::string arg : {"--job-name=x", "-Jx", "--output=/tmp/o", "--array=1-4",
                                "--wrap=echo", "--partition=gpu", "-N2"}) {
    o.sbatch_args = {arg};
    CHECK(test::usage_error_of([&] {
            slurm::check_options(o);
          }).rfind("--slurm-sbatch-arg '" + arg + "' sets --", 0) == 0);
  }
  o.sbatch_args = {"--partition=gpu"};
  CHECK(test::usage_error_of([&] { slurm::check_options(o); }) ==
        "--slurm-sbatch-arg '--partition=gpu' sets --partition: use --slurm-partition");
  o.sbatch_args.clear();
  o.lanes = 0;
  CHECK(test::usage_error_of([&] { slurm::check_options(o); }) ==
        "--slurm-lanes must be at least 1");
}

TEST_CASE("slurm: a CUDA lane asks for one GPU unless told otherwise") {
  CHECK(slurm::with_defaults({}, true).gres == "gpu:1");
  CHECK(slurm::with_defaults({}, false).gres.empty());
  SlurmOptions h200;
  h200.gres = "gpu:h200:1";
  CHECK(slurm::with_defaults(h200, true).gres == "gpu:h200:1");
}

TEST_CASE("slurm: sbatch_argv is options, the fixed script, then the command as it is") {
  SlurmOptions o{2, "gpu", "proj", "1:00:00", "gpu:1", {"--qos=high"}};
  auto argv = slurm::sbatch_argv(o, "abh-r-lane1", "/runs/100%/r", "/runs/100%/r/logs/lanes/lane1",
                                 {"/bin/abharness", "lane", "--run-dir", "/runs/100%/r"});
  std::vector<std::string> want = {"sbatch",
                                   "--parsable",
                                   "--job-name=abh-r-lane1",
                                   "--chdir=/runs/100%/r",
                                   "--output=/runs/100%%/r/logs/lanes/lane1-%j.out",
                                   "--error=/runs/100%%/r/logs/lanes/lane1-%j.err",
                                   "--open-mode=append",
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--partition=gpu",
                                   "--account=proj",
                                   "--time=1:00:00",
                                   "--gres=gpu:1",
                                   "--qos=high",
                                   "/runs/100%/r/launcher/job.sbatch",
                                   "/bin/abharness",
                                   "lane",
                                   "--run-dir",
                                   "/runs/100%/r"};
  CHECK(argv == want);
  SlurmOptions plain;
  auto bare = slurm::sbatch_argv(plain, "n", "/r", "/r/logs/x", {"cmd"});
  CHECK(std::find(bare.begin(), bare.end(), "--gres=") == bare.end());
  CHECK(bare.size() == 11);
  CHECK(test::usage_error_of([] {
          slurm::sbatch_argv({}, "n", "/r", "/r\\x/log", {"c"});
        }).find("contains a backslash") != std::string::npos);
}

TEST_CASE("slurm: the batch script hands its arguments to the command unparsed") {
  test::TempDir tmp;
  const fs::path script = slurm::write_batch_script(tmp.path());
  CHECK(script == tmp.path() / "launcher" / "job.sbatch");
  CHECK(test::slurp(script).rfind("#!/bin/sh\n", 0) == 0);
  SpawnSpec spec;
  spec.argv = {script.string(), "/usr/bin/printf", "[%s]", "a b", "$(touch x)", "'", "", ";ls"};
  spec.cwd = tmp.path();
  spec.stdout_path = tmp.path() / "out";
  REQUIRE(run_process(spec).ok());
  CHECK(test::slurp(tmp.path() / "out") == "[a b][$(touch x)]['][][;ls]");
  CHECK_FALSE(fs::exists(tmp.path() / "x"));
}

TEST_CASE("slurm: the real runner returns stdout, keeps both logs, and quotes stderr on failure") {
  test::TempDir tmp;
  const auto& runner = slurm::process_runner();
  CHECK(runner.run({"sh", "-c", "echo 123; echo noise >&2"}, tmp.path()) == "123\n");
  CHECK(test::slurp(tmp.path() / "logs" / "slurm" / "sh.out") == "123\n");
  CHECK(test::slurp(tmp.path() / "logs" / "slurm" / "sh.err") == "noise\n");
  CHECK(test::error_of([&] {
          runner.run({"sh", "-c", "echo 'invalid partition' >&2; exit 1"}, tmp.path());
        }) == "sh failed (exit code 1): invalid partition");
}
