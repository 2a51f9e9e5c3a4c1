#include "stats/arm_variation.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/fisher_f.hpp>
#include <cmath>
#include <numeric>
#include <utility>

#include "stats/statistics.hpp"

namespace abh {

ArmVariation own_arm_variation(std::span<const double> log_a, std::span<const double> log_b,
                               double within_variance) {
  double ss = 0;
  double df = 0;
  for (auto logs : {log_a, log_b}) {
    if (logs.size() < 2) continue;
    double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
    for (double y : logs) ss += (y - mean) * (y - mean);
    df += static_cast<double>(logs.size() - 1);
  }
  if (df == 0) return {};
  return {std::max(0.0, ss / df - within_variance), df};
}

namespace {

// The pooled estimate from its sums: sum of df * variance, and sum of df.
ArmVariation pooled_from_sums(double weighted, double df) {
  if (df == 0) return {};
  return {weighted / df, std::min(df, kPriorDfCap)};
}

}  // namespace

ArmVariation pooled_arm_variation(const std::vector<ArmVariation>& others) {
  double weighted = 0, df = 0;
  for (const auto& o : others) {
    weighted += o.df * o.variance;
    df += o.df;
  }
  return pooled_from_sums(weighted, df);
}

std::vector<ArmVariation> leave_one_out_priors(
    const std::vector<std::optional<ArmVariation>>& own) {
  const std::size_t n = own.size();
  // Sums over the shapes after i, then over those before it as i advances: every term is >= 0,
  // so the two partial sums lose nothing to cancellation.
  std::vector<double> after_weighted(n + 1, 0), after_df(n + 1, 0);
  for (std::size_t i = n; i-- > 0;) {
    after_weighted[i] = after_weighted[i + 1] + (own[i] ? own[i]->df * own[i]->variance : 0);
    after_df[i] = after_df[i + 1] + (own[i] ? own[i]->df : 0);
  }
  std::vector<ArmVariation> priors(n);
  double before_weighted = 0, before_df = 0;
  for (std::size_t i = 0; i < n; ++i) {
    priors[i] =
        pooled_from_sums(before_weighted + after_weighted[i + 1], before_df + after_df[i + 1]);
    if (!own[i]) continue;
    before_weighted += own[i]->df * own[i]->variance;
    before_df += own[i]->df;
  }
  return priors;
}

ArmVariation moderated_arm_variation(const ArmVariation& own, const ArmVariation& prior) {
  const double df = own.df + prior.df;
  if (df == 0) return {};
  return {(own.df * own.variance + prior.df * prior.variance) / df, df};
}

bool conflicts_with_prior(const ArmVariation& own, const ArmVariation& prior, double level,
                          double floor_variance) {
  if (level <= 0 || own.df <= 0 || prior.df <= 0) return false;
  const boost::math::fisher_f_distribution<double> f(own.df, prior.df);
  return own.variance > boost::math::quantile(f, level) * std::max(prior.variance, floor_variance);
}

namespace {

// What a shape's estimate on d degrees of freedom reads, as a multiple of the variance it
// estimates, at its median: chi2(d) / d at 0.5 (0.455 for one degree of freedom, 0.84 for four).
double chi2_median_ratio(double df) {
  return boost::math::quantile(boost::math::chi_squared_distribution<double>(df), 0.5) / df;
}

// The median of `sorted` without its element at `skip` (none when skip is past its end).
double median_without(const std::vector<double>& sorted, std::size_t skip) {
  const std::size_t n = sorted.size() - (skip < sorted.size() ? 1 : 0);
  auto at = [&](std::size_t k) { return sorted[k < skip ? k : k + 1]; };
  return n % 2 ? at(n / 2) : 0.5 * (at(n / 2 - 1) + at(n / 2));
}

// For each shape, the median of every other shape's estimate, each divided by
// chi2_median_ratio of its degrees of freedom (so that shapes that all vary alike give about
// their common variance), with their summed degrees of freedom capped as a prior's are. One sort:
// a report judges every shape of a grid, and the adaptive rule a report per step.
std::vector<ArmVariation> median_references(const std::vector<std::optional<ArmVariation>>& own) {
  std::vector<std::pair<double, std::size_t>> scaled;  // (estimate / ratio, shape)
  double df = 0;
  for (std::size_t i = 0; i < own.size(); ++i)
    if (own[i] && own[i]->df > 0) {
      scaled.push_back({own[i]->variance / chi2_median_ratio(own[i]->df), i});
      df += own[i]->df;
    }
  std::sort(scaled.begin(), scaled.end());
  std::vector<double> sorted(scaled.size());
  std::vector<std::size_t> rank(own.size(), scaled.size());  // past the end: not among them
  for (std::size_t k = 0; k < scaled.size(); ++k) {
    sorted[k] = scaled[k].first;
    rank[scaled[k].second] = k;
  }
  std::vector<ArmVariation> refs(own.size());
  for (std::size_t i = 0; i < own.size(); ++i) {
    const bool counted = rank[i] < sorted.size();
    if (sorted.size() - (counted ? 1 : 0) == 0) continue;
    refs[i] = {median_without(sorted, rank[i]),
               std::min(df - (counted ? own[i]->df : 0), kPriorDfCap)};
  }
  return refs;
}

}  // namespace

RobustPriors robust_priors(const std::vector<std::optional<ArmVariation>>& own, double level,
                           double floor_variance, bool median_reference, bool own_floor) {
  RobustPriors r{leave_one_out_priors(own), std::vector<bool>(own.size(), false)};
  const std::vector<ArmVariation> references = median_reference ? median_references(own) : r.priors;
  std::vector<std::optional<ArmVariation>> kept = own;
  bool any = false;
  for (std::size_t i = 0; i < own.size(); ++i)
    if (own[i] && conflicts_with_prior(*own[i], references[i], level, floor_variance)) {
      r.conflict[i] = any = true;
      kept[i].reset();
    }
  if (!any) return r;
  r.priors = leave_one_out_priors(kept);
  // Against the median reference the shapes found borrow from one another; against the pooled
  // prior, `found` stays empty and they borrow nothing.
  std::vector<std::optional<ArmVariation>> found(own.size());
  if (median_reference)
    for (std::size_t i = 0; i < own.size(); ++i)
      if (r.conflict[i]) found[i] = own[i];
  const std::vector<ArmVariation> among_found = leave_one_out_priors(found);
  for (std::size_t i = 0; i < own.size(); ++i) {
    if (!r.conflict[i]) continue;
    r.priors[i] = among_found[i];
    if (own_floor && r.priors[i].df > 0)
      r.priors[i].variance = std::max(r.priors[i].variance, own[i]->variance);
  }
  return r;
}

namespace {

// Flags the arms of one variant beyond `limit` from its median of arms, or none when half of them
// or more are: then no majority says which arms are the normal ones.
std::vector<bool> beyond(std::span<const double> logs, double centre, double limit) {
  std::vector<bool> out(logs.size(), false);
  if (logs.size() < kMinArmsForOutliers) return out;
  std::size_t n = 0;
  for (std::size_t i = 0; i < logs.size(); ++i)
    if (std::abs(logs[i] - centre) > limit) out[i] = true, ++n;
  if (2 * n >= logs.size()) std::fill(out.begin(), out.end(), false);
  return out;
}

// Keeps the flagged arms that lie within `limit` of some arm of the other variant: a level the
// other build's processes reached too is one the kernel's processes fall at, not a disturbance.
void keep_shared_levels(std::vector<bool>& flagged, std::span<const double> logs,
                        std::span<const double> other, double limit) {
  for (std::size_t i = 0; i < logs.size(); ++i)
    if (flagged[i] && std::any_of(other.begin(), other.end(),
                                  [&](double y) { return std::abs(logs[i] - y) <= limit; }))
      flagged[i] = false;
}

}  // namespace

OutlierArms outlier_arms(std::span<const double> log_a, std::span<const double> log_b,
                         double sigmas, double floor) {
  OutlierArms r{std::vector<bool>(log_a.size(), false), std::vector<bool>(log_b.size(), false)};
  if (sigmas <= 0) return r;
  std::vector<double> distances;
  double centre[2] = {0, 0};
  const std::span<const double> variants[2] = {log_a, log_b};
  for (int v = 0; v < 2; ++v) {
    if (variants[v].size() < kMinArmsForOutliers) continue;
    centre[v] = median({variants[v].begin(), variants[v].end()});
    for (double y : variants[v]) distances.push_back(std::abs(y - centre[v]));
  }
  if (distances.empty()) return r;
  const double limit = std::max(sigmas * 1.4826 * median(distances), floor);
  r.a = beyond(log_a, centre[0], limit);
  r.b = beyond(log_b, centre[1], limit);
  keep_shared_levels(r.a, log_a, log_b, limit);
  keep_shared_levels(r.b, log_b, log_a, limit);
  return r;
}

}  // namespace abh
