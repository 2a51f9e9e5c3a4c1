// A lane: the arms that run one after another on one GPU (or the host), each in a fresh worker
// process (docs/scale.md, "Lanes"). The sweep (sweep.hpp) runs a lane as steps, and a starter
// (worker_starter.hpp) gives each step its worker.
#pragma once

#include <string>
#include <vector>

#include "model/schedule.hpp"

namespace abh {

struct Lane {
  int index = 0;
  std::string gpu_uuid;  // what the lane's workers see as CUDA_VISIBLE_DEVICES; empty on a CPU
  std::vector<const Task*> tasks;
  // The CPUs its workers use, when the lane chose them on its node (a launcher that places lanes:
  // the plan's Task::cpus are empty); empty: each task's own, from the plan.
  std::vector<int> cpus;
};

// One worker of a lane: an arm, or the unrecorded warm-up of its variant.
struct Step {
  const Task* task;
  bool warmup;
};

}  // namespace abh
