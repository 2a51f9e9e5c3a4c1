#include "report/report_notes.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "model/timing.hpp"
#include "report/adaptive.hpp"

namespace abh {
namespace {

// The shapes compared at one SM clock, and the range of their reference clocks.
std::optional<note::AtOneClock> at_one_clock(const Report& r) {
  note::AtOneClock n;
  for (const auto& row : r.shapes) {
    if (!row.reference_mhz) continue;
    const double mhz = *row.reference_mhz;
    n.lo_mhz = n.shapes == 0 ? mhz : std::min(n.lo_mhz, mhz);
    n.hi_mhz = n.shapes == 0 ? mhz : std::max(n.hi_mhz, mhz);
    ++n.shapes;
  }
  if (n.shapes == 0) return std::nullopt;
  return n;
}

// Said, not silent: a shape that could not be compared at one clock because only some of its
// arms carry clock readings (results from before clocks were recorded, resumed into a run).
void not_at_one_clock(const Report& r, std::vector<ReportNote>& out) {
  if (!r.stats.clock_normalize) return;
  for (const auto& row : r.shapes) {
    if (row.reference_mhz || row.verdict == Verdict::failed) continue;
    note::NotAtOneClock n{row.shape, {}};
    for (const auto& a : row.arms)
      if (!a.median_mhz) n.unclocked_arms.push_back(a.arm);
    if (!n.unclocked_arms.empty() && n.unclocked_arms.size() < row.arms.size())
      out.push_back(std::move(n));
  }
}

// One shape's gap is mostly the power controller's arm-to-arm wander (a few percent on an H200
// at its power cap, either way); averaged over shapes it says whether the candidate draws more.
// A gap is a ratio of clocks less one, so the average is geometric.
std::optional<note::ClockGap> clock_gap(const Report& r) {
  double log_sum = 0;
  int gaps = 0;
  for (const auto& row : r.shapes)
    if (row.clock_gap) log_sum += std::log1p(*row.clock_gap), ++gaps;
  if (gaps == 0) return std::nullopt;
  return note::ClockGap{gaps, std::expm1(log_sum / gaps)};
}

// Undecided shapes whose estimate of how much whole arms differ rests on fewer than 4 degrees of
// freedom: their intervals are wide for want of blocks, not of samples.
std::optional<note::FewArmDegrees> few_arm_degrees(const Report& r) {
  note::FewArmDegrees n;
  for (const auto& row : r.shapes) {
    const bool undecided = row.verdict == Verdict::ambiguous || row.verdict == Verdict::unstable;
    if (!undecided || !row.variation || row.variation->df >= 4) continue;
    if (n.shapes++ == 0) n.first_shape = row.shape;
    n.df = std::max(n.df, row.variation->df);
  }
  if (n.shapes == 0) return std::nullopt;
  return n;
}

std::optional<note::DriftJudged> drift_judged(const Report& r) {
  note::DriftJudged n;
  for (const auto& row : r.shapes) {
    if (!row.drift_ci) continue;
    if (n.shapes++ == 0) n.first_shape = row.shape;
    if (row.verdict != Verdict::unstable) ++n.decided;
  }
  if (n.shapes == 0) return std::nullopt;
  return n;
}

std::optional<note::Unconfirmed> unconfirmed(const Report& r) {
  note::Unconfirmed n;
  for (const auto& row : r.shapes) {
    if (!unconfirmed_verdict(row, r.stats.decisive_factor)) continue;
    if (n.shapes++ == 0) n.first_shape = row.shape;
  }
  if (n.shapes == 0) return std::nullopt;
  return n;
}

std::optional<note::Decisive> decisive(const Report& r) {
  note::Decisive n;
  n.factor = r.stats.decisive_factor;
  for (const auto& row : r.shapes) {
    if (!decisive_one_arm(row, n.factor)) continue;
    if (n.shapes++ == 0) n.first_shape = row.shape;
  }
  if (n.shapes == 0) return std::nullopt;
  return n;
}

std::optional<note::PriorConflict> prior_conflict(const Report& r) {
  note::PriorConflict n;
  n.level = r.stats.prior_conflict_level;
  n.median = r.stats.prior_conflict_median;
  for (const auto& row : r.shapes) {
    if (!row.prior_conflict) continue;
    if (n.shapes++ == 0) n.first_shape = row.shape;
  }
  if (n.shapes == 0) return std::nullopt;
  return n;
}

std::optional<note::OutlierArms> outliers_left_out(const Report& r) {
  note::OutlierArms n;
  n.sigmas = r.stats.outlier_arm_sigmas;
  for (const auto& row : r.shapes) {
    bool any = false;
    for (const auto& a : row.arms) {
      if (!a.outlier_ratio) continue;
      if (n.arms++ == 0) n.first = row.shape + "/" + a.arm, n.first_ratio = *a.outlier_ratio;
      any = true;
    }
    n.shapes += any ? 1 : 0;
  }
  if (n.arms == 0) return std::nullopt;
  return n;
}

std::optional<note::ExtraBlocks> extra_blocks(const Report& r) {
  note::ExtraBlocks n;
  n.planned = r.provenance.schedule.rounds;
  n.limit = r.provenance.schedule.until_decided;
  for (const auto& row : r.shapes) {
    std::set<int> blocks;
    for (const auto& a : row.arms)
      if (a.round >= n.planned) blocks.insert(a.round), ++n.arms;
    n.blocks += static_cast<int>(blocks.size());
    n.shapes += blocks.empty() ? 0 : 1;
  }
  if (n.arms == 0) return std::nullopt;
  return n;
}

// The rule's futility test (report/adaptive.hpp) on the report's own rows and options.
std::optional<note::Withheld> withheld_blocks(const Report& r) {
  const ScheduleOptions& s = r.provenance.schedule;
  if (!s.futility || s.until_decided == 0) return std::nullopt;
  note::Withheld n;
  for (const auto& row : r.shapes) {
    if (row.verdict != Verdict::unstable && row.verdict != Verdict::ambiguous) continue;
    std::set<int> blocks;
    for (const auto& a : row.arms) blocks.insert(a.round);
    const int left = s.rounds + s.until_decided - static_cast<int>(blocks.size());
    const auto width = futile_width(row, left, r.stats);
    if (!width) continue;
    if (n.shapes++ == 0) n.first_shape = row.shape, n.first_expected = std::expm1(*width);
  }
  if (n.shapes == 0) return std::nullopt;
  return n;
}

// --share-host matters only where the run held the host's lock: a CPU lane, or launch timing.
std::optional<note::SharedHost> shared_host(const Report& r) {
  if (!r.provenance.schedule.share_host) return std::nullopt;
  const auto& lanes = r.provenance.machine;
  const bool cpu_lane =
      std::any_of(lanes.begin(), lanes.end(), [](const Environment& e) { return !e.gpu; });
  const bool launch = std::any_of(r.shapes.begin(), r.shapes.end(),
                                  [](const ShapeRow& row) { return row.timing == kTimingLaunch; });
  if (!cpu_lane && !launch) return std::nullopt;
  return note::SharedHost{};
}

}  // namespace

int candidate_arms(const ShapeRow& row) {
  return static_cast<int>(std::count_if(row.arms.begin(), row.arms.end(), [](const ArmStats& a) {
    return a.counts() && a.variant == "candidate";
  }));
}

bool decisive_one_arm(const ShapeRow& row, double factor) {
  if (factor <= 0 || !row.ci || candidate_arms(row) != 1) return false;
  if (row.verdict != Verdict::faster && row.verdict != Verdict::slower) return false;
  for (const ArmStats& a : row.arms)
    if (a.ok && !device_timer(a.timer)) return false;
  const Interval& judged = row.drift_ci ? *row.drift_ci : *row.ci;
  return judged.lo >= factor || judged.hi <= 1 / factor;
}

bool unconfirmed_verdict(const ShapeRow& row, double decisive_factor) {
  return (row.verdict == Verdict::faster || row.verdict == Verdict::slower) &&
         candidate_arms(row) == 1 && !decisive_one_arm(row, decisive_factor);
}

std::vector<ReportNote> report_notes(const Report& r) {
  std::vector<ReportNote> out;
  for (const auto& reason : r.sol.notes) out.push_back(note::NoSpeedOfLight{reason});
  if (auto n = at_one_clock(r)) out.push_back(*n);
  not_at_one_clock(r, out);
  if (auto n = clock_gap(r)) out.push_back(*n);
  if (auto n = shared_host(r)) out.push_back(*n);
  if (auto n = few_arm_degrees(r)) out.push_back(*n);
  if (auto n = drift_judged(r)) out.push_back(*n);
  if (auto n = unconfirmed(r)) out.push_back(*n);
  if (auto n = decisive(r)) out.push_back(*n);
  if (auto n = prior_conflict(r)) out.push_back(*n);
  if (auto n = outliers_left_out(r)) out.push_back(*n);
  if (auto n = extra_blocks(r)) out.push_back(*n);
  if (auto n = withheld_blocks(r)) out.push_back(*n);
  return out;
}

NoteTopic topic(const ReportNote& n) {
  struct Topic {
    NoteTopic operator()(const note::NoSpeedOfLight&) const { return NoteTopic::speed_of_light; }
    NoteTopic operator()(const note::AtOneClock&) const { return NoteTopic::clock; }
    NoteTopic operator()(const note::NotAtOneClock&) const { return NoteTopic::clock; }
    NoteTopic operator()(const note::ClockGap&) const { return NoteTopic::clock; }
    NoteTopic operator()(const note::SharedHost&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::FewArmDegrees&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::DriftJudged&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::Unconfirmed&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::Decisive&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::PriorConflict&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::OutlierArms&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::ExtraBlocks&) const { return NoteTopic::interval; }
    NoteTopic operator()(const note::Withheld&) const { return NoteTopic::interval; }
  };
  return std::visit(Topic{}, n);
}

}  // namespace abh
