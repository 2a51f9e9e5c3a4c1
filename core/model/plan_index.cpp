#include "model/plan_index.hpp"

#include <functional>

namespace abh {

std::size_t PlanIndex::ArmKeyHash::operator()(const ArmKey& k) const noexcept {
  const std::hash<std::string_view> h;
  // boost::hash_combine's mixing: the shape and the arm are not interchangeable.
  std::size_t seed = h(k.shape);
  seed ^= h(k.arm) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

PlanIndex::PlanIndex(const Plan& plan) : plan_(plan) {
  shapes_.reserve(plan.shapes.size());
  for (std::size_t i = 0; i < plan.shapes.size(); ++i) shapes_.emplace(plan.shapes[i].id, i);
  tasks_.reserve(plan.tasks.size());
  tasks_of_.reserve(plan.shapes.size());
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    auto [it, fresh] = tasks_.emplace(ArmKey{t.shape, t.arm}, i);
    if (!fresh && !duplicate_) duplicate_ = Duplicate{it->second, i};
    tasks_of_[t.shape].push_back(i);
  }
}

const Shape* PlanIndex::shape(std::string_view id) const {
  auto it = shapes_.find(id);
  return it == shapes_.end() ? nullptr : &plan_.shapes[it->second];
}

const Task* PlanIndex::task(std::string_view shape, std::string_view arm) const {
  auto it = tasks_.find(ArmKey{shape, arm});
  return it == tasks_.end() ? nullptr : &plan_.tasks[it->second];
}

std::span<const std::size_t> PlanIndex::tasks_of(std::string_view shape) const {
  auto it = tasks_of_.find(shape);
  if (it == tasks_of_.end()) return {};
  return it->second;
}

}  // namespace abh
