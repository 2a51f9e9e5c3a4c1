// One arm's view of a plan: what a worker needs of plan.json, read without parsing every shape and
// task of a large grid. A 50,000-shape plan is about 35 MB; parsing it whole and checking every
// task against every other took a worker seconds per arm (docs/scale.md, "What a large grid
// costs"). The orchestrator has read and checked the whole plan before it starts any worker
// (load_plan) and passes the SHA-256 of the bytes it checked (worker_protocol::kPlanDigestEnv);
// the worker reads the same file, holds its bytes to that digest, and parses only the plan's
// header (everything but "shapes" and "tasks"), its own shape and its own task, which it finds by
// the layout write_plan gives plan.json.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "model/plan.hpp"

namespace abh {

struct ArmPlanRead {
  // The plan with `shapes` and `tasks` holding the arm's shape and task only, checked by
  // plan_from_json like a whole plan, with file_sha256 the digest of the bytes read. Empty when
  // the entries could not be found by their layout; then `why_not` says why, and the caller reads
  // the plan whole (load_plan), which also names the error of a plan without the arm.
  std::optional<Plan> plan;
  std::string why_not;
  std::uintmax_t bytes = 0;  // the size of plan.json
};

// Reads <run>/plan.json for the arm shape/arm, without following links. The bytes must have the
// SHA-256 `checked_sha256` (the plan the orchestrator checked whole): anything else is a
// ProvenanceError, the plan changed since.
ArmPlanRead load_arm_plan(const std::filesystem::path& run_dir, const std::string& shape,
                          const std::string& arm, const std::string& checked_sha256);

}  // namespace abh
