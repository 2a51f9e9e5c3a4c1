// Adaptive rounds (`--until-decided N`, docs/statistics.md): after its planned blocks, a shape
// that is still unstable or ambiguous gets another interleaved block, up to N of them. The plan
// lists every block that could run from the start (Task::conditional), so it stays written once;
// whether block j of a shape runs is a deterministic function of the results of the blocks before
// it and of the statistics options the plan recorded (ScheduleOptions::decision). The sweep runs
// what the rule calls for, resume continues an interrupted extension, and validation accepts
// exactly the blocks the rule calls for.
#pragma once

#include <vector>

#include "model/adaptive_blocks.hpp"
#include "model/outcome.hpp"
#include "model/plan.hpp"

namespace abh {

// Decides block by block: block j (rounds <= j < rounds + until_decided) of shape s is required
// when j is the first conditional block or block j - 1 of s was required, every arm of the plan's
// blocks and of the required blocks before j has a valid result in `outcomes`, and the report
// over exactly those arms, computed with plan.schedule.decision, calls s unstable or ambiguous.
// It is the BlockRule (model/adaptive_blocks.hpp) every command passes to validate_run.
AdaptiveBlocks adaptive_blocks(const Plan& plan, const std::vector<ArmOutcome>& outcomes);

}  // namespace abh
