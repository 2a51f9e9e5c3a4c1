// The order in which arms run (docs/method.md). Per shape the default is A1, B, A2 — each arm a
// fresh worker process on the same GPU — so that a linear drift of the machine cancels out of
// mean(A1,A2)/B and shows up as A2/A1. Other schedules are registered by name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/grid.hpp"
#include "system/json_io.hpp"

namespace abh {

struct Task {
  std::string shape;
  std::string arm;      // "A1", "B", "A2" (ABA); "A1","B1","B2","A2" (ABBA); ...
  std::string variant;  // "baseline" (A arms) or "candidate" (B arms)
  int round = 0;        // repetition index for multi-round schedules
  int gpu = 0;          // index into the plan's GPUs; all arms of a shape share it
  bool operator==(const Task&) const = default;
};

struct ScheduleOptions {
  std::string name = "aba";  // aba | abba | random
  int rounds = 1;            // blocks per shape
  std::uint64_t seed = 0;    // random: order of A/B inside each block
  int gpus = 1;              // shapes are sharded round-robin over this many GPUs
};

// The "schedule" object of plan.json and of report.json's provenance.
json to_json(const ScheduleOptions& o);
ScheduleOptions schedule_options_from_json(const json& j, const std::string& where);

// Returns the tasks in execution order (shape by shape; the arms of a shape back to back).
std::vector<Task> make_schedule(const std::vector<Shape>& shapes, const ScheduleOptions& opt);
std::vector<std::string> schedule_names();

}  // namespace abh
