// Adaptive rounds (`--until-decided N`, docs/statistics.md): after its planned blocks, a shape
// that is still unstable or ambiguous gets another interleaved block, up to N of them. The plan
// lists every block that could run from the start (Task::conditional), so it stays written once;
// whether block j of a shape runs is a deterministic function of the results of the blocks before
// it and of the statistics options the plan recorded (ScheduleOptions::decision). The sweep runs
// what the rule calls for, resume continues an interrupted extension, and validation accepts
// exactly the blocks the rule calls for.
#pragma once

#include <optional>
#include <vector>

#include "model/adaptive_blocks.hpp"
#include "model/outcome.hpp"
#include "model/plan.hpp"
#include "report/report.hpp"

namespace abh {

// Blocks that cannot decide a shape (ScheduleOptions::futility, docs/statistics.md). The interval
// of a shape is a Student t draw of its arms' mean offsets (stats/statistics.hpp): its half-width
// goes as t(nu) sqrt(1/kA + 1/kB) for kA baseline and kB candidate arms and nu degrees of freedom
// between arms. After `left` more blocks like those it had, each variant has (blocks + left) /
// blocks times its arms, and nu grows by the arms added. Scaled by that, the shape's interval
// (log scale) has the half-width returned: the expected width, when its arms go on varying as they
// have. Returned only when even an interval a fifth narrower than that (about the spread of a
// variance estimated on 20 degrees of freedom), around the shape's present centre, could neither
// lie inside the band nor wholly beyond it; nothing when more blocks may decide the shape, when
// none are left, when the row has no interval or between-arm estimate to scale, or when it has
// had one block only (one disturbed arm would then pass for arms that always vary so much: the
// first extra block is always run).
std::optional<double> futile_width(const ShapeRow& row, int left, const StatsOptions& stats);

// Decides step by step, from the results on disk. At each step, with every arm in effect so far
// (the plan's blocks and the conditional blocks required at earlier steps) holding a valid result,
// the report over exactly those arms, computed with plan.schedule.decision, judges every shape
// again; each shape it calls unstable or ambiguous, and with ScheduleOptions::confirm each shape
// it calls faster or slower on a single candidate arm, is given its next conditional block (blocks
// rounds, rounds + 1, ... in order, at most until_decided of them). A shape that looked decided at
// one step may be given a block at a later one: the blocks of other shapes move the pooled prior.
// The steps end when no shape is given a block, so when they end every shape the last report
// calls undecided has had all its blocks. When an arm in effect has no valid result, the rule
// waits at that step (AdaptiveBlocks::waiting_at). It is the BlockRule
// (model/adaptive_blocks.hpp) every command passes to validate_run.
AdaptiveBlocks adaptive_blocks(const Plan& plan, const std::vector<ArmOutcome>& outcomes);

}  // namespace abh
