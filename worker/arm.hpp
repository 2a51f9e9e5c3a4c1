// One arm of one shape, measured as a recipe of named phases (as nvbench's measure_cold reads):
// read the plan, load the plugin, open the device, prepare the problem, timer and tactic, warm up,
// measure, verify, write the result. Each phase logs a line stamped with seconds since the process
// started, so a slow start can be located without a profiler (docs/gpu.md, "Where an arm's time
// goes").
#pragma once

#include <abharness/worker.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "model/worker_protocol.hpp"

namespace abh::worker {

struct ArmRequest {
  std::filesystem::path run_dir;  // holds plan.json
  std::string shape;              // a shape id of the plan
  std::string arm;                // an arm name of the plan (A1, B, A2, ...)
  // The front end that started the process and its plugin table; null: the executable, which
  // loads the plan's plugin itself.
  const abh_worker_front_end* front_end = nullptr;
  worker_protocol::WorkerFiles files;  // the worker's files as this process runs them
  bool warmup = false;                 // measure, but write no result (the sweep's warm-up)
  bool ahead =
      false;  // started ahead: stdin is the turn socket (worker_protocol.hpp, start_turn.hpp)
};

// Measures the arm and writes results/<shape>/<arm>.json atomically. Throws on failure: an
// ExitError for an unsupported request or a wrong result (no result is written), a UsageError for
// a plan that does not hold the arm, a PluginError or Error for anything else.
void measure_arm(const ArmRequest& request, std::chrono::steady_clock::time_point process_start);

}  // namespace abh::worker
