// Lookups into a plan by name, in constant expected time: a shape by its id, a task by its shape
// and arm, and the tasks of one shape in plan order. A grid of 50,000 shapes has 150,000 tasks;
// looking each one up by scanning the plan made reading, validating and reporting such a run
// quadratic (docs/scale.md, "What a large grid costs"). The index is built once, in one pass over
// the plan, and refers to the plan's own entries: the plan must outlive it and not change while
// it is in use.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/plan.hpp"

namespace abh {

class PlanIndex {
 public:
  explicit PlanIndex(const Plan& plan);
  PlanIndex(const PlanIndex&) = delete;
  PlanIndex& operator=(const PlanIndex&) = delete;

  const Plan& plan() const { return plan_; }
  // The first shape with this id (as a scan of plan.shapes finds it), or null.
  const Shape* shape(std::string_view id) const;
  // The first task of this shape and arm (as Plan::find_task finds it), or null.
  const Task* task(std::string_view shape, std::string_view arm) const;
  // The indices into plan.tasks of every task of this shape, in plan order; empty for a shape
  // with no task (or none of that id).
  std::span<const std::size_t> tasks_of(std::string_view shape) const;

  // Two tasks of one shape and arm: the plan is invalid (plan_from_json refuses it).
  struct Duplicate {
    std::size_t first = 0;  // index into plan.tasks of the first task of that arm
    std::size_t again = 0;  // the earliest later task of the same shape and arm
  };
  // The earliest task planned twice, or nothing.
  std::optional<Duplicate> duplicate() const { return duplicate_; }

 private:
  struct ArmKey {
    std::string_view shape, arm;
    bool operator==(const ArmKey&) const = default;
  };
  struct ArmKeyHash {
    std::size_t operator()(const ArmKey& k) const noexcept;
  };
  const Plan& plan_;
  std::unordered_map<std::string_view, std::size_t> shapes_;   // id -> index into plan.shapes
  std::unordered_map<ArmKey, std::size_t, ArmKeyHash> tasks_;  // -> index into plan.tasks
  std::unordered_map<std::string_view, std::vector<std::size_t>> tasks_of_;
  std::optional<Duplicate> duplicate_;
};

}  // namespace abh
