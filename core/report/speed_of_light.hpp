// Speed of light for a report: each shape's roofline time (stats/roofline.hpp) on the GPU it ran
// on, and each arm's fraction of it. docs/roofline.md explains the model.
#pragma once

#include <string>
#include <vector>

#include "model/plan_index.hpp"
#include "report/report.hpp"
#include "stats/roofline.hpp"

namespace abh {

// What a report needs for speed-of-light times: the GPU table (data/gpus.json) with its default
// fractions. Without a table no shape gets one, and the report records `table_error` (why it
// could not be loaded) or that none was given.
struct RooflineContext {
  const GpuTable* table = nullptr;
  std::string table_error;
};

// Sets every row's speed-of-light time and each valid arm's fraction of it; `rows` are the plan's
// shapes, in plan order. A shape gets one when its GPU (plan.machine[task.gpu].gpu->name) is in
// the table and its params have positive integer m, n, k and a precision the GPU runs natively.
// Returns how the times were obtained, with each reason a shape has none recorded once.
SpeedOfLight add_speed_of_light(const PlanIndex& plan, const RooflineContext& ctx,
                                std::vector<ShapeRow>& rows);

}  // namespace abh
