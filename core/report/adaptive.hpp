// Adaptive rounds (`--until-decided N`, docs/statistics.md): after its planned blocks, a shape
// that is still unstable or ambiguous gets another interleaved block, up to N of them. The plan
// lists every block that could run from the start (Task::conditional), so it stays written once;
// whether block j of a shape runs is a deterministic function of the results of the blocks before
// it and of the statistics options the plan recorded (ScheduleOptions::decision). The sweep runs
// what the rule calls for, resume continues an interrupted extension, and validation accepts
// exactly the blocks the rule calls for.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/outcome.hpp"
#include "model/plan.hpp"

namespace abh {

struct AdaptiveBlocks {
  // (shape, block) of every conditional block the rule calls for.
  std::set<std::pair<std::string, int>> required;
  // The first conditional block that could not be decided yet, because an arm of an earlier block
  // (one the plan or the rule requires) has no valid result; -1 when nothing waits. An arm that
  // failed stops the extension until `resume` has measured it: the decision must rest on every
  // arm before it, or a later resume could change a decision already acted on.
  int waiting_at = -1;
  // Why each block was called for: "<shape> block <j>: <verdict> after blocks 0..j-1".
  std::vector<std::string> reasons;
};

// Decides block by block: block j (rounds <= j < rounds + until_decided) of shape s is required
// when j is the first conditional block or block j - 1 of s was required, every arm of the plan's
// blocks and of the required blocks before j has a valid result in `outcomes`, and the report
// over exactly those arms, computed with plan.schedule.decision, calls s unstable or ambiguous.
AdaptiveBlocks adaptive_blocks(const Plan& plan, const std::vector<ArmOutcome>& outcomes);

// Whether a task is in effect: planned, or a conditional block the rule requires.
bool in_effect(const Task& t, const AdaptiveBlocks& blocks);

}  // namespace abh
