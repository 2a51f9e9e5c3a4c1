// The order in which arms run (docs/method.md). Per shape the default is A1, B, A2 — each arm a
// fresh worker process on the same GPU — so that a linear drift of the machine cancels out of
// mean(A1,A2)/B and shows up as A2/A1. Other schedules are registered by name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/grid.hpp"
#include "model/stats_options.hpp"
#include "system/json_io.hpp"

namespace abh {

struct Task {
  std::string shape;
  // Two variants: "A1", "B", "A2" (ABA); "A1","B1","B2","A2" (ABBA); ... With a variants file:
  // "<variant>.<n>", the variant's n-th arm of the shape ("o2.1", "o3.1", "pr.1", "o2.2").
  std::string arm;
  std::string variant;  // "baseline" (A arms) or "candidate" (B arms), or the variant's name
  int round = 0;        // the block this arm belongs to (0 for the first)
  int gpu = 0;          // index into the plan's GPUs; all arms of a shape share it
  // A block of --until-decided: it runs only when the adaptive rule calls for it
  // (report/adaptive.hpp), and its results are accepted only then.
  bool conditional = false;
  // Where the worker runs (the plan's placement, planner.hpp): the CPUs it may use, the first of
  // them the one its measuring thread is pinned to. The same for every arm of a shape.
  std::vector<int> cpus;
  bool operator==(const Task&) const = default;
};

struct ScheduleOptions {
  std::string name = "aba";  // aba | abba | random
  int rounds = 1;            // blocks per shape
  std::uint64_t seed = 0;    // random: order of A/B inside each block
  int gpus = 1;              // shapes are sharded round-robin over this many GPUs
  // --until-decided: up to this many more blocks for each shape still unstable or ambiguous after
  // the planned ones, judged with `decision` (the statistics options of the run that planned
  // them). Their tasks are in the plan from the start, marked conditional.
  int until_decided = 0;
  // The rule also confirms (docs/statistics.md#confirmation): a shape called faster or slower on a
  // single candidate arm gets its next conditional block, as an undecided one does. False in
  // plans written before confirmation, whose rule gave blocks to undecided shapes only.
  bool confirm = false;
  // until_decided was chosen by `--until-decided auto` (planner.hpp), not given as a number.
  bool until_decided_auto = false;
  // The rule gives no further block to an undecided shape that even all the blocks it has left
  // could not decide (report/adaptive.hpp, futile_width). False in plans written before it,
  // whose rule gave every undecided shape all of its blocks.
  bool futility = false;
  StatsOptions decision;
  // How many workers each lane keeps started ahead of their turn: they read their plan, load
  // their plugin and initialise the GPU driver while the arm before them measures, and each
  // creates its CUDA context only once the arm before it has ended (docs/method.md, "Starting
  // the next arm ahead"). 0: each worker starts when the one before it has ended.
  int start_ahead = 0;
  // --share-host: a run whose timings the host's load disturbs holds the host's lock shared, not
  // exclusively (orchestrator/measuring_lock.hpp), so other such runs on other CPUs of the machine
  // measure beside it, sharing its caches and memory bandwidth; the report says so.
  bool share_host = false;
  bool operator==(const ScheduleOptions&) const = default;
};

// The "schedule" object of plan.json and of report.json's provenance.
json to_json(const ScheduleOptions& o);
ScheduleOptions schedule_options_from_json(const json& j, const std::string& where);

// The variants of --baseline/--candidate, whose arms are named A1, B, A2.
inline const std::vector<std::string>& two_variants() {
  static const std::vector<std::string> v{"baseline", "candidate"};
  return v;
}

// Returns the tasks in execution order (shape by shape; the arms of a shape back to back), the
// planned blocks of each shape followed by its until_decided conditional blocks. Throws
// UsageError for a schedule that leaves no shape two arms of one variant: the variation between
// arms could not be estimated (statistics.hpp).
//
// `variants` are the plan's, the baseline first. With two_variants() the blocks are the
// schedule's letters (ABA, ABBA, AB or BA). With any others (a variants file, docs/variants.md)
// every block measures every variant, the baseline first and last: aba is A B C .. A, abba is
// A B C .. C B A, random a seeded random order of all of them per block; arms are named
// <variant>.<n>.
std::vector<Task> make_schedule(const std::vector<Shape>& shapes, const ScheduleOptions& opt,
                                const std::vector<std::string>& variants = two_variants());
std::vector<std::string> schedule_names();

}  // namespace abh
