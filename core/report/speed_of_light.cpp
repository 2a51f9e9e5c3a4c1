#include "report/speed_of_light.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "model/model_grid.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

// Reasons a shape has no speed-of-light time, each kept once with the shapes it applies to, in
// first-seen (plan) order so the report is deterministic.
class SolNotes {
 public:
  void add(const std::string& reason) {
    for (auto& [r, n] : reasons_)
      if (r == reason) {
        ++n;
        return;
      }
    reasons_.emplace_back(reason, 1);
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& [r, n] : reasons_)
      out.push_back(r + " (" + std::to_string(n) + (n == 1 ? " shape)" : " shapes)"));
    return out;
  }

 private:
  std::vector<std::pair<std::string, int>> reasons_;
};

std::optional<std::int64_t> positive_int(const json& params, const char* key) {
  auto it = params.find(key);
  if (it == params.end() || !it->is_number_integer()) return std::nullopt;
  auto v = it->get<std::int64_t>();
  if (v <= 0) return std::nullopt;
  return v;
}

// The table entry of the GPU the shape ran on, or nothing with the reason in `why`.
const GpuSpec* shape_gpu(const PlanIndex& index, const Shape& shape, const RooflineContext& ctx,
                         std::string& why) {
  const Plan& plan = index.plan();
  const auto tasks = index.tasks_of(shape.id);
  const Task* task = tasks.empty() ? nullptr : &plan.tasks[tasks.front()];
  if (!task) {
    why = "the plan has no arms for the shape";
    return nullptr;
  }
  if (task->gpu < 0 || static_cast<std::size_t>(task->gpu) >= plan.machine.size()) {
    why = "the plan has no machine entry for GPU index " + std::to_string(task->gpu);
    return nullptr;
  }
  const Environment& env = plan.machine[static_cast<std::size_t>(task->gpu)];
  if (!env.gpu) {
    why = "CPU run, no GPU spec";
    return nullptr;
  }
  if (!ctx.table) {
    why = ctx.table_error.empty() ? "no GPU table was given to the report"
                                  : "GPU table not loaded: " + ctx.table_error;
    return nullptr;
  }
  const GpuSpec* spec = nullptr;
  for (const auto& g : ctx.table->gpus)
    if (g.name == env.gpu->name) spec = &g;
  if (!spec)
    why = "GPU '" + env.gpu->name + "' not in " + ctx.table->origin +
          " (add its datasheet figures there)";
  return spec;
}

// Whether the shape is a GEMM whose precision `spec` runs natively; the reason in `why` if not.
bool native_gemm(const Shape& shape, const GpuSpec& spec, std::string& why) {
  if (!shape.params.is_object() || !positive_int(shape.params, "m") ||
      !positive_int(shape.params, "n") || !positive_int(shape.params, "k")) {
    why = "params have no positive integer m, n, k (not a GEMM shape)";
    return false;
  }
  // No guess: a plain {m, n, k} shape may be an fp32 kernel (the CUDA example is), and a bf16
  // speed-of-light would flatter it several times over.
  if (!shape.params.contains("precision")) {
    why = "params name no precision (add \"precision\" to the grid for a speed-of-light)";
    return false;
  }
  if (!shape.params["precision"].is_string()) {
    why = "params.precision is not a string";
    return false;
  }
  const std::string precision = shape.params["precision"].get<std::string>();
  std::string recipe;
  try {
    recipe = recipe_of(precision);
  } catch (const Error&) {
    why = "unknown GEMM precision '" + precision + "'";
    return false;
  }
  if (std::find(spec.precisions.begin(), spec.precisions.end(), recipe) == spec.precisions.end()) {
    why = spec.name + " does not run " + precision + " natively";
    return false;
  }
  return true;
}

// The speed-of-light time of one shape, or (in `why`) the reason it has none. `gpu` receives the
// table entry used.
std::optional<RooflineResult> shape_sol(const PlanIndex& plan, const Shape& shape,
                                        const RooflineContext& ctx, const RooflineOptions& opt,
                                        std::string& why, std::string& gpu) {
  const GpuSpec* spec = shape_gpu(plan, shape, ctx, why);
  if (!spec || !native_gemm(shape, *spec, why)) return std::nullopt;
  try {
    RooflineResult r = roofline(shape, *spec, opt);
    gpu = spec->name;
    return r;
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
}

}  // namespace

SpeedOfLight add_speed_of_light(const PlanIndex& index, const RooflineContext& ctx,
                                std::vector<ShapeRow>& rows) {
  const Plan& plan = index.plan();
  SpeedOfLight sol;
  SolNotes notes;
  RooflineOptions opt;
  if (ctx.table) {
    sol.table = ctx.table->origin;
    opt = default_roofline_options(*ctx.table);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string why, gpu;
    auto r = shape_sol(index, plan.shapes[i], ctx, opt, why, gpu);
    if (!r) {
      notes.add(why);
      continue;
    }
    ShapeRow& row = rows[i];
    row.sol_ns = r->sol_s * 1e9;
    row.sol_bound = r->bound;
    for (auto& a : row.arms)
      if (a.ok) a.sol_fraction = *row.sol_ns / a.median_ns;
    if (row.speedup) {
      row.baseline_sol_fraction = *row.sol_ns / *row.baseline_ns;
      row.candidate_sol_fraction = *row.sol_ns / *row.candidate_ns;
    }
    ++sol.shapes;
    if (std::find(sol.gpus.begin(), sol.gpus.end(), gpu) == sol.gpus.end()) sol.gpus.push_back(gpu);
  }
  std::sort(sol.gpus.begin(), sol.gpus.end());
  sol.notes = notes.lines();
  return sol;
}

}  // namespace abh
