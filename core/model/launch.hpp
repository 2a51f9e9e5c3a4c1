// Where the lanes of a sweep run. A lane is the ordered arms that share one GPU (or one host, for a
// CPU plugin): every arm of a shape is in one lane. The local launcher runs each lane as a thread
// of the orchestrator on a GPU of this machine; the Slurm launcher submits each lane as a batch job
// that runs on the node Slurm chooses (docs/scale.md).
//
// The plan is written once, before the node of any lane is known, so it records what will be
// submitted (the launcher and its options) and the machine expected on every node, with the
// facts only Slurm decides (the node's name, the GPU's UUID, bus id and index) left empty. What
// was then submitted and where it ran is recorded as it becomes known, one atomically written
// file per event under <run>/launcher/, never by editing the plan:
//   launcher/jobs/lane<L>-job<ID>.json          the orchestrator: a job it submitted for lane L
//   launcher/nodes/lane<L>-job<ID>-r<N>.json    the job itself (its N-th start): node and GPU
// Provenance validation takes a result's node and GPU from these records and everything else
// from the plan.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/environment.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {

struct SlurmOptions {
  int lanes = 1;  // Slurm jobs, one GPU (or one node's host) each
  std::string partition, account, time, gres;
  std::vector<std::string> sbatch_args;  // extra sbatch options, one argv element each
  bool operator==(const SlurmOptions&) const = default;
};

struct LauncherSpec {
  std::string name = "local";  // local | slurm
  SlurmOptions slurm;          // slurm only
  bool operator==(const LauncherSpec&) const = default;
};

json to_json(const LauncherSpec& l);
LauncherSpec launcher_spec_from_json(const json& j, const std::string& where);

// True when the launcher, not the plan, decides each lane's node and GPU.
bool launcher_places_lanes(const LauncherSpec& l);
// True when the workers of `lanes` lanes take turns to open their GPUs: lanes of this host
// (the local launcher), more than one. Processes that open CUDA devices at the same time are each
// slower than the sum of opening them one after another (docs/scale.md#lanes). Slurm lanes do
// not: a lock on the shared run directory would serialise nodes that do not contend.
bool lanes_take_turns_to_open(const LauncherSpec& l, int lanes);

// The machine a plan can promise before Slurm chose a node: `e` with the node's name and the
// GPU's UUID, bus id and index cleared.
Environment without_placement(Environment e);
// The plan's expected machine `planned` on the node and GPU that `node` describes.
Environment with_placement(Environment planned, const Environment& node);
// Where an arm ran, as far as comparing the arms of a shape cares: "<host> GPU <uuid> CPUs <list>".
// A lane job sets a shape aside when its arms' places differ from its own; provenance refuses a
// shape whose results differ in it.
std::string arm_place(const Environment& e, const std::vector<int>& cpus);
// The first field (a dotted path such as "gpu.name") in which `node` differs from `planned`
// outside the placement, with both values; empty when the node is the planned machine.
std::string machine_mismatch(const Environment& planned, const Environment& node);

// A job the orchestrator submitted for a lane; written right after sbatch accepted it.
struct SubmissionRecord {
  int lane = 0;
  std::string job_id;
  std::string job_name;
  std::string submitted_at;         // UTC, ISO 8601
  std::vector<std::string> arms;    // "<shape>/<arm>": the lane's arms still missing then
  std::vector<std::string> sbatch;  // the sbatch argv, exactly as run
};

// A job's start on a node, written by the job before it runs any arm. `refused` is non-empty
// when the node is not the planned machine: the job then ran nothing.
struct NodeRecord {
  int lane = 0;
  std::string job_id;
  int restart = 0;  // Slurm's restart count: a requeued job starts again under its id
  std::string started_at;
  Environment environment;  // as a worker on this node and GPU sees it
  std::string refused;
  // Results moved to set_aside/ before this start, run-relative: a shape cut short on another
  // node or GPU is measured again whole, since its arms are only comparable on one GPU.
  std::vector<std::string> set_aside;
  // The CPUs the lane chose on this node for every worker it starts (the plan names none: the
  // planning machine's CPU numbers mean nothing here), the first the measuring thread's; empty
  // when the node was refused. `placement_note` says where the choice fell back from its rule.
  std::vector<int> cpus;
  std::string placement_note;
};

json to_json(const SubmissionRecord& r);
SubmissionRecord submission_from_json(const json& j, const std::string& where);
json to_json(const NodeRecord& r);
NodeRecord node_record_from_json(const json& j, const std::string& where);

// Run-relative paths of the records, and the full paths for messages.
std::filesystem::path submission_rel(int lane, const std::string& job_id);
std::filesystem::path node_record_rel(int lane, const std::string& job_id, int restart);
std::filesystem::path submission_path(const std::filesystem::path& run_dir, int lane,
                                      const std::string& job_id);
std::filesystem::path node_record_path(const std::filesystem::path& run_dir, int lane,
                                       const std::string& job_id, int restart);

// Writes a record atomically, without following links (system/run_dir_fs.hpp).
void write_record(const RunDirFs& run, const SubmissionRecord& r);
void write_record(const RunDirFs& run, const NodeRecord& r);

// Every record of the run, sorted by file name, read without following links; throws naming a
// file that cannot be read or is not a regular file.
std::vector<SubmissionRecord> load_submissions(const RunDirFs& run);
std::vector<NodeRecord> load_node_records(const RunDirFs& run);
std::vector<SubmissionRecord> load_submissions(const std::filesystem::path& run_dir);
std::vector<NodeRecord> load_node_records(const std::filesystem::path& run_dir);

}  // namespace abh
