// Runs the conditional blocks of `--until-decided` (report/adaptive.hpp) after the planned ones:
// block by block, each block of every shape the rule calls for, its arms back to back. Resume
// calls it too, so an interrupted extension continues where it stopped.
#pragma once

#include <filesystem>

#include "model/plan.hpp"
#include "sweep.hpp"

namespace abh {

// Runs until the rule calls for no block that has no valid result, or a block waits on an arm
// that failed (resume measures it again and goes on), or validation finds a problem (the report
// step refuses the run). Returns how many arms it ran.
//
// Resume's repair of an extension whose decisions changed: a block's decision rests on every arm
// before it, and when one of those lost its result (deleted, or moved out for failing its checks)
// and resume measured it again, the rule, judging the new result, may no longer call for blocks
// measured under its earlier decision. Their results are no evidence of this run any more (kept,
// they would weigh the shape towards the arms that once asked for them): each is moved to
// set_aside/unrequired/<shape>/<arm>.json, never deleted, with a line saying why. Nothing is
// moved when validation finds any other problem.
int run_adaptive_blocks(const std::filesystem::path& run_dir, const Plan& plan,
                        const WorkerStarter& starter, SweepOptions opt);

}  // namespace abh
