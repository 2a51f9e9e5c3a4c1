#include "report/adaptive.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "report/report_builder.hpp"
#include "report/report_notes.hpp"
#include "report/report_render.hpp"
#include "report/variants_report.hpp"

namespace abh {

std::optional<double> futile_width(const ShapeRow& row, int left, const StatsOptions& stats) {
  if (left <= 0 || !row.ci || !row.variation || !(row.variation->df > 0)) return std::nullopt;
  double ka = 0, kb = 0;
  std::set<int> blocks;
  for (const ArmStats& a : row.arms) {
    if (!a.counts()) continue;
    (a.variant == "candidate" ? kb : ka) += 1;
    blocks.insert(a.round);
  }
  // One block cannot tell arms that go on varying from one disturbed arm, which a second block's
  // arms leave out (stats/arm_variation.hpp): judged from the second block on.
  if (ka == 0 || kb == 0 || blocks.size() < 2) return std::nullopt;
  const double grow =
      static_cast<double>(blocks.size() + left) / static_cast<double>(blocks.size());
  const double q = (1 + stats.confidence) / 2;
  auto width = [q](double a, double b, double nu) {
    return boost::math::quantile(boost::math::students_t(nu), q) * std::sqrt(1 / a + 1 / b);
  };
  const double nu = row.variation->df, nu_after = nu + (ka + kb) * (grow - 1);
  const double lo = std::log(row.ci->lo), hi = std::log(row.ci->hi);
  const double after = (hi - lo) / 2 * width(ka * grow, kb * grow, nu_after) / width(ka, kb, nu);
  const double h = 0.8 * after, centre = (lo + hi) / 2;
  const double up = std::log1p(stats.noise_band), down = std::log1p(-stats.noise_band);
  const bool same = centre - h >= down && centre + h <= up;
  const bool change = centre - h > up || centre + h < down;
  if (same || change) return std::nullopt;
  return after;
}

namespace {

bool undecided(Verdict v) {
  return v == Verdict::unstable || v == Verdict::ambiguous;
}

// Why the rule gives a shape its next block, or nothing when it gives none.
std::string wants_block(const ShapeRow& row, bool confirm, double decisive_factor) {
  if (undecided(row.verdict)) return to_string(row.verdict);
  if (confirm && unconfirmed_verdict(row, decisive_factor))
    return "confirmation of " + to_string(row.verdict) + " on one candidate arm";
  return "";
}

// Why an undecided comparison (`name`: its candidate, empty in a two-variant run) gets no block
// although `left` are left: what futile_width expects of them, after blocks 0..done-1.
std::string futile_reason(const std::string& name, const std::string& why, const ShapeRow& row,
                          int done, int left, double width) {
  return (name.empty() ? "" : name + ": ") + why + " after blocks 0.." + std::to_string(done - 1) +
         ", interval " + fmt::interval(*row.ci) + "; after all " + std::to_string(left) +
         " block(s) left still about +-" + fmt::percent(std::expm1(width), 2) +
         ", too wide to lie within the band or beyond it";
}

// Every arm in effect under `b` with its valid result, in plan order; nothing when one has none.
std::optional<std::vector<ArmOutcome>> arms_in_effect(
    const Plan& plan, const AdaptiveBlocks& b,
    const std::map<std::pair<std::string, std::string>, const ArmOutcome*>& valid) {
  std::vector<ArmOutcome> arms;
  for (const Task& t : plan.tasks) {
    if (!in_effect(t, b)) continue;
    auto it = valid.find({t.shape, t.arm});
    if (it == valid.end()) return std::nullopt;
    arms.push_back(*it->second);
  }
  return arms;
}

// The reports the rule judges: the plan's one comparison, or each candidate's of a variants
// file (named), with the statistics options the plan recorded.
std::vector<std::pair<std::string, Report>> judge(const Plan& plan,
                                                  const std::vector<ArmOutcome>& arms) {
  if (!is_variants_plan(plan)) return {{"", build_report(plan, arms, plan.schedule.decision, "")}};
  std::vector<std::pair<std::string, Report>> out;
  for (auto& c : build_variants_report(plan, arms, plan.schedule.decision, "").candidates)
    out.emplace_back(c.name, std::move(c.report));
  return out;
}

}  // namespace

AdaptiveBlocks adaptive_blocks(const Plan& plan, const std::vector<ArmOutcome>& outcomes) {
  AdaptiveBlocks b;
  if (plan.schedule.until_decided == 0) return b;
  const int first = plan.schedule.rounds, end = first + plan.schedule.until_decided;
  std::map<std::pair<std::string, std::string>, const ArmOutcome*> valid;  // (shape, arm)
  for (const auto& o : outcomes)
    if (o.result) valid[{o.task.shape, o.task.arm}] = &o;
  std::map<std::string, int> next;  // shape -> its next conditional block
  std::set<std::string> decided_once;
  // A step that goes on gives at least one shape a block, and no shape gets more than N: at most
  // N x shapes + 1 steps, each one report; N + 1 at most when no shape is decided at one step and
  // undecided at a later one.
  for (int step = 0;; ++step) {
    const auto arms = arms_in_effect(plan, b, valid);
    if (!arms) {
      b.waiting_at = step;
      return b;
    }
    // Every shape is judged again at every step, those that looked decided before included: the
    // prior of the between-arm variance is pooled over the shapes, so the blocks of other shapes
    // can widen an interval that once looked decided (docs/statistics.md).
    const std::vector<std::pair<std::string, Report>> judged = judge(plan, *arms);
    bool any = false;
    b.withheld.clear();
    for (std::size_t i = 0; i < judged.front().second.shapes.size(); ++i) {
      const ShapeRow& row = judged.front().second.shapes[i];
      int& j = next.try_emplace(row.shape, first).first->second;
      // A block measures every variant: a shape gets one when any candidate's comparison wants
      // it (the first that does is named), and not for a comparison no block left can decide.
      std::string why, futile;
      for (const auto& [name, r] : judged) {
        const ShapeRow& c = r.shapes[i];
        why = wants_block(c, plan.schedule.confirm, r.stats.decisive_factor);
        const auto width = plan.schedule.futility && undecided(c.verdict)
                               ? futile_width(c, end - j, r.stats)
                               : std::nullopt;
        if (width) {  // undecided, so `why` names it
          if (futile.empty()) futile = futile_reason(name, why, c, j, end - j, *width);
          why.clear();
        }
        if (!why.empty()) {
          if (!name.empty()) why = name + ": " + why;
          break;
        }
      }
      if (why.empty()) {
        if (!futile.empty())
          b.withheld.push_back(row.shape + ": " + futile);
        else
          decided_once.insert(row.shape);
        continue;
      }
      if (j >= end) continue;
      b.required.insert({row.shape, j});
      b.reasons.push_back(row.shape + " block " + std::to_string(j) + ": " + why +
                          " after blocks 0.." + std::to_string(j - 1) +
                          (decided_once.count(row.shape) ? " (undecided again)" : ""));
      ++j;
      any = true;
    }
    if (!any) return b;
  }
}

}  // namespace abh
