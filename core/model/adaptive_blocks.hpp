// Which conditional blocks of an adaptive run (`--until-decided N`, Task::conditional) are in
// effect. The rule that decides it judges the results so far with the report's statistics
// (report/adaptive.hpp); the sweep runs what it calls for and provenance validation accepts
// exactly that. Validation lies below the report, so it takes the rule as a BlockRule from its
// caller rather than calling up into report/.
#pragma once

#include <functional>
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
  // The decision step the rule waits at, because an arm in effect (one the plan or an earlier
  // step requires) has no valid result; -1 when nothing waits. While it waits, any conditional
  // block not required yet may still be: a result of one is kept, not judged. An arm that failed
  // stops the extension until `resume` has measured it: the decision must rest on every arm before
  // it, or a later resume could change a decision already acted on.
  int waiting_at = -1;
  // Why each block was called for: "<shape> block <j>: <verdict> after blocks 0..j-1", with
  // " (undecided again)" for a shape an earlier step had found decided.
  std::vector<std::string> reasons;
  // Undecided shapes the last step gave no block although they had blocks left, because even all
  // of those could not decide them (ScheduleOptions::futility): "<shape>: <verdict> after blocks
  // 0..j-1, ..." with the widths that say why.
  std::vector<std::string> withheld;
};

// Decides the blocks of `plan` from `outcomes`, the plan's tasks with their valid results so far.
using BlockRule =
    std::function<AdaptiveBlocks(const Plan& plan, const std::vector<ArmOutcome>& outcomes)>;

// Whether a task is in effect: planned, or a conditional block the rule requires.
inline bool in_effect(const Task& t, const AdaptiveBlocks& blocks) {
  return !t.conditional || blocks.required.count({t.shape, t.round}) > 0;
}

}  // namespace abh
