// Per-layer sums of a model grid (`abharness grid --model`): the model-grid GEMMs of a report,
// summed per precision recipe and compared to bf16's sum.
#pragma once

#include <optional>
#include <vector>

#include "model/plan.hpp"
#include "report/report.hpp"

namespace abh {

// Model-grid GEMMs are the shapes labelled "<qkv|proj|fc1|fc2> <fprop|dgrad|wgrad>" (the labels
// model_gemms() writes) with a GEMM precision param. `rows` are the plan's shapes, in plan order,
// with their speed-of-light times already set. Absent when the plan has no model-grid GEMM.
std::optional<LayerSummary> layer_summary(const Plan& plan, const std::vector<ShapeRow>& rows);

}  // namespace abh
