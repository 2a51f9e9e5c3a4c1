// Provenance validation. Before any statistic is computed every file under results/ is checked
// against the plan — schema, digest, invocation, source identity, binaries, machine — and any
// unplanned, misplaced or duplicate file is an error. Each rule has a name (documented in
// docs/provenance.md) and each problem names the file, the field, what was expected and what was
// found. A report is never produced from a run with problems.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/adaptive_blocks.hpp"
#include "model/outcome.hpp"
#include "model/plan.hpp"
#include "model/plan_index.hpp"

namespace abh {

struct ProvenanceProblem {
  std::string rule;  // e.g. "payload-digest", "plugin-sha256", "unplanned-file"
  std::string file;  // path relative to the run directory
  std::string field;
  std::string expected;
  std::string found;
  std::string describe() const;
};

// What identifies a file's content cheaply within one process: if neither changed, a result
// validated earlier is still the one on disk.
struct FileStamp {
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

struct Validation {
  // One per task in effect, in plan order: every planned task, and the conditional blocks the
  // adaptive rule calls for (model/adaptive_blocks.hpp).
  std::vector<ArmOutcome> outcomes;
  std::vector<ProvenanceProblem> problems;
  std::vector<std::string> leftovers;       // interrupted atomic writes (hidden temp files)
  std::string result_set_digest;            // over the plan and every valid result
  std::map<std::string, FileStamp> stamps;  // valid results (run-relative path) as validated
  bool complete() const;                    // every planned arm has a valid result
};

// Validates one result (already parsed as JSON) against the plan's task: `plan.file_sha256` is the
// digest of the plan file every result must name. Appends problems and returns the typed result
// only when it passed. When the plan's launcher places lanes (Slurm), `lane_nodes` are the records
// of the task's lane's jobs that started (launcher/nodes/): the result's node and GPU must be one
// of them, its CPUs the ones that job chose there, and everything else the plan's machine.
std::optional<ArmResult> validate_result(const Plan& plan, const Task& task,
                                         const std::string& rel_path, const json& raw,
                                         std::vector<ProvenanceProblem>& problems,
                                         const std::vector<NodeRecord>& lane_nodes = {});
// The same through an index of the plan, for a caller that validates many results of one plan
// (looking the task's shape up in the plan itself costs a pass over every shape).
std::optional<ArmResult> validate_result(const PlanIndex& plan, const Task& task,
                                         const std::string& rel_path, const json& raw,
                                         std::vector<ProvenanceProblem>& problems,
                                         const std::vector<NodeRecord>& lane_nodes = {});

// Validates the whole run directory, reading it without following links: every result against
// the plan file as it is on disk (and that against the plan as this process read it), and every
// built plugin the plan records against its digest. Failure records under logs/ (from crashed,
// hung or wrong arms) become outcomes with a failure reason. With `earlier` (a validation made by
// this process of the same run), results it passed that are unchanged on disk are reused, not
// re-read. `blocks` decides which conditional blocks of an adaptive plan are in effect (the
// commands pass report/adaptive.hpp's adaptive_blocks); a plan without any never calls it.
Validation validate_run(const std::filesystem::path& run_dir, const Plan& plan,
                        const BlockRule& blocks, const Validation* earlier = nullptr);

// The rule of a result whose conditional block the adaptive rule does not call for.
inline constexpr const char* kUnrequiredBlock = "unrequired-block";

}  // namespace abh
