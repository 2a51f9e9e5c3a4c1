// What a new run checks before it creates its run directory, so that a mistake costs nothing: every
// option in range and consistent with the others, and a plan that its own reader will accept. The
// checks that need the built plugins (their device, a dry run of each shape) come after the build
// and before plan.json is written (dry_run.hpp, gpu_presence.hpp). docs/provenance.md, "Checked
// before anything is built", lists them.
#pragma once

#include <vector>

#include "model/grid.hpp"
#include "planner.hpp"

namespace abh {

// Every option of `run` that can be checked without the grid or a build: the measurement
// settings, the statistics options (the report's and the adaptive rule's), the launcher and the
// options only some launchers honour, --start-ahead, --gpus, --cpus and --python. UsageError
// naming the flag and the fix.
void check_options(const PlanRequest& req);

// The schedule options against the grid (--schedule, --rounds, --until-decided), and the size of
// the plan they make: its shapes and its tasks, every planned and conditional block, must fit in
// the kPlanMaxBytes that plan.json's reader accepts. UsageError with the numbers and the largest
// --until-decided (or --rounds) that fits this grid. With --until-decided auto, returns the most
// conditional blocks that keep the plan within kAutoPlanBytes (0 otherwise).
int check_schedule(const PlanRequest& req, const std::vector<Shape>& shapes);

// What `--until-decided auto` lets its conditional blocks make plan.json grow to: a quarter of what
// its reader accepts. Every worker reads the plan, and a plan written element by element still
// takes about 2 s per 34 MB before the first arm (docs/scale.md): blocks that most shapes never
// run are not worth that on a grid of tens of thousands of shapes, which gets none by default.
inline constexpr std::uintmax_t kAutoPlanBytes = kPlanMaxBytes / 4;

// What the rest of a plan takes besides its shapes and tasks (variants, machine, interpreter,
// command line: a few kB, tens of kB with a large Python environment), kept free by
// check_schedule.
inline constexpr std::uintmax_t kPlanReserveBytes = 1u << 20;

}  // namespace abh
