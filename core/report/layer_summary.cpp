#include "report/layer_summary.hpp"

#include <map>
#include <string>
#include <utility>

#include "model/model_grid.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

// "<qkv|proj|fc1|fc2> <fprop|dgrad|wgrad>", optionally followed by " (...)" (the MoE note):
// the labels model_gemms() writes.
bool model_gemm_label(const std::string& label) {
  auto sp = label.find(' ');
  if (sp == std::string::npos) return false;
  const std::string op = label.substr(0, sp);
  if (op != "qkv" && op != "proj" && op != "fc1" && op != "fc2") return false;
  auto end = label.find(' ', sp + 1);
  const std::string pass = label.substr(sp + 1, end == std::string::npos ? end : end - sp - 1);
  if (pass != "fprop" && pass != "dgrad" && pass != "wgrad") return false;
  if (end == std::string::npos) return true;
  return label.compare(end, 2, " (") == 0 && label.back() == ')';
}

// The precision recipe of a model-grid GEMM, or nothing for any other shape.
std::optional<std::string> model_recipe(const Shape& s) {
  if (!model_gemm_label(s.label) || !s.params.is_object()) return std::nullopt;
  auto it = s.params.find("precision");
  if (it == s.params.end() || !it->is_string()) return std::nullopt;
  try {
    return recipe_of(it->get<std::string>());
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<LayerSummary> layer_summary(const Plan& plan, const std::vector<ShapeRow>& rows) {
  struct Acc {
    PrecisionSum sum;
    int with_sol = 0;
    double sol_ns = 0;
  };
  std::map<std::string, Acc> by_recipe;
  LayerSummary out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // With several timings, the sums are of the first timing's rows: a layer's time is one
    // timing's, and each GEMM counts once.
    if (rows[i].timing != rows.front().timing) continue;
    auto recipe = model_recipe(plan.shapes[i]);
    if (!recipe) {
      ++out.other_shapes;
      continue;
    }
    const ShapeRow& row = rows[i];
    Acc& acc = by_recipe[*recipe];
    PrecisionSum& p = acc.sum;
    p.precision = *recipe;
    ++p.gemms;
    if (row.sol_ns) {
      ++acc.with_sol;
      acc.sol_ns += *row.sol_ns;
    }
    if (!row.speedup) {
      p.missing.push_back(row.shape);
      continue;
    }
    p.baseline_ns = p.baseline_ns.value_or(0) + *row.baseline_ns;
    p.candidate_ns = p.candidate_ns.value_or(0) + *row.candidate_ns;
  }
  if (by_recipe.empty()) return std::nullopt;
  for (auto& [recipe, acc] : by_recipe)
    if (acc.with_sol == acc.sum.gemms) acc.sum.sol_ns = acc.sol_ns;
  const PrecisionSum* bf16 = nullptr;
  if (auto it = by_recipe.find("bf16"); it != by_recipe.end()) bf16 = &it->second.sum;
  for (const auto& recipe : known_precisions()) {
    auto it = by_recipe.find(recipe);
    if (it == by_recipe.end()) continue;
    PrecisionSum p = it->second.sum;
    if (bf16 && bf16->missing.empty() && p.missing.empty() && bf16->baseline_ns) {
      p.baseline_vs_bf16 = *p.baseline_ns / *bf16->baseline_ns;
      p.candidate_vs_bf16 = *p.candidate_ns / *bf16->candidate_ns;
    }
    out.precisions.push_back(std::move(p));
  }
  return out;
}

}  // namespace abh
