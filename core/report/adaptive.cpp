#include "report/adaptive.hpp"

#include <map>

#include "report/report_builder.hpp"

namespace abh {

AdaptiveBlocks adaptive_blocks(const Plan& plan, const std::vector<ArmOutcome>& outcomes) {
  AdaptiveBlocks b;
  const int first = plan.schedule.rounds, end = first + plan.schedule.until_decided;
  std::map<std::pair<std::string, std::string>, const ArmOutcome*> valid;  // (shape, arm)
  for (const auto& o : outcomes)
    if (o.result) valid[{o.task.shape, o.task.arm}] = &o;
  for (int j = first; j < end; ++j) {
    // The arms in effect before block j; every one must have a valid result.
    std::vector<ArmOutcome> before;
    for (const Task& t : plan.tasks) {
      if (t.round >= j || !in_effect(t, b)) continue;
      auto it = valid.find({t.shape, t.arm});
      if (it == valid.end()) {
        b.waiting_at = j;
        return b;
      }
      before.push_back(*it->second);
    }
    const Report r = build_report(plan, before, plan.schedule.decision, "");
    bool any = false;
    for (const auto& row : r.shapes) {
      const bool open = j == first || b.required.count({row.shape, j - 1}) > 0;
      if (!open || (row.verdict != Verdict::unstable && row.verdict != Verdict::ambiguous))
        continue;
      b.required.insert({row.shape, j});
      b.reasons.push_back(row.shape + " block " + std::to_string(j) + ": " +
                          to_string(row.verdict) + " after blocks 0.." + std::to_string(j - 1));
      any = true;
    }
    if (!any) break;
  }
  return b;
}

}  // namespace abh
