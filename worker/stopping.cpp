#include "stopping.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "stats/median_interval.hpp"
#include "stats/statistics.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh::worker {
namespace {

std::string secs(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g s", x);
  return b;
}

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f%%", 100 * x);
  return b;
}

// A precision: three significant digits, so that 0.0412 % does not read 0.04 %.
std::string precision_pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g%%", 100 * x);
  return b;
}

std::string nanos(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

// The limits every rule stops at, with what it had reached in words; nothing when none is hit.
std::optional<StopDecision> at_limit(const MeasureSettings& s, int n, const Progress& p,
                                     const std::string& reached) {
  if (n >= s.max_samples)
    return StopDecision{
        true, StopCause::sample_limit,
        "sample limit " + std::to_string(s.max_samples) + " reached with " + reached};
  if (p.measured_s >= s.max_time_s && n >= s.min_samples)
    return StopDecision{true, StopCause::time_limit,
                        "time limit " + secs(s.max_time_s) + " reached with " + reached};
  return std::nullopt;
}

bool minimums_met(const MeasureSettings& s, int n, const Progress& p) {
  return n >= s.min_samples && p.wall_s >= s.min_time_s;
}

// A quantity a rule watches, recorded each time the sample count has at least doubled: what it
// was when the arm had a half or a quarter of the samples it has now.
class DoublingHistory {
 public:
  void record(int n, double value) {
    if (entries_.empty() || n >= 2 * entries_.back().first) entries_.emplace_back(n, value);
  }
  // The latest entry with at most n / factor samples.
  const std::pair<int, double>* before(int n, int factor) const {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
      if (static_cast<long>(factor) * it->first <= n) return &*it;
    return nullptr;
  }

 private:
  std::vector<std::pair<int, double>> entries_;  // (samples, value)
};

class Precision final : public StoppingRule {
 public:
  Precision(const MeasureSettings& s, const StoppingGoal& g)
      : s_(s), g_(g), base_target_(precision_target(s, g)), target_(base_target_) {}
  std::string name() const override { return "precision"; }
  std::optional<double> target() const override { return target_; }

  StopDecision check(const std::vector<double>& v, const Progress& p) override {
    const int n = static_cast<int>(v.size());
    const std::optional<MedianInterval> ci = median_interval(v, g_.confidence);
    // A --median-precision asked for is kept; the run's own target relaxes far from the baseline.
    if (ci && s_.median_precision == 0 && g_.reference_ns > 0)
      target_ = far_precision_target(
          base_target_, g_.noise_band, (ci->lo + ci->hi) / 2, g_.reference_ns,
          p.median_mhz > 0 && g_.reference_mhz > 0 ? p.median_mhz / g_.reference_mhz : 1);
    // At the sample limit before --min-time (a fast loop over a tiny kernel), a target met is
    // still the reason to stop, not the limit.
    const bool capped = n >= s_.max_samples && n >= s_.min_samples;
    if (ci && (minimums_met(s_, n, p) || capped) && ci->half_width() <= target_)
      return {true, StopCause::precision,
              "median +-" + precision_pct(ci->half_width()) + " (" + level() + " interval " +
                  nanos(ci->lo) + "-" + nanos(ci->hi) + " ns) <= " + precision_pct(target_) +
                  " target" + far_from_baseline() + " after " + std::to_string(n) + " samples" +
                  (minimums_met(s_, n, p) ? "" : ", the sample limit, before --min-time")};
    if (ci && minimums_met(s_, n, p))
      if (auto d = out_of_reach(n, *ci, p)) return *d;
    if (ci) history_.record(n, ci->half_width());
    const std::string reached = (ci ? "the median at +-" + precision_pct(ci->half_width())
                                    : std::string("no interval yet")) +
                                " (target " + precision_pct(target_) + far_from_baseline() +
                                " not met)";
    if (auto limit = at_limit(s_, n, p, reached)) return *limit;
    StopDecision d;
    d.wanted = wanted(n, ci);
    return d;
  }

 private:
  // Says why the target is wider than the run's, when it is: every reason that names the target.
  std::string far_from_baseline() const {
    if (target_ <= base_target_) return "";
    return " (" + precision_pct(base_target_) +
           " relaxed: the median lies far beyond the band from its baseline's " +
           nanos(g_.reference_ns) + " ns)";
  }
  std::string level() const {
    char b[32];
    std::snprintf(b, sizeof b, "%g%%", 100 * g_.confidence);
    return b;
  }
  // Stops when the interval narrowed by slow_narrowing or less per doubling of the samples over
  // the last fourfold, and at that rate the target lies beyond the arm's sample or time limit.
  std::optional<StopDecision> out_of_reach(int n, const MedianInterval& ci,
                                           const Progress& p) const {
    if ((ci.hi - ci.lo) / 2 <= g_.resolution_ns) return std::nullopt;  // ties at the tick
    const auto* before = history_.before(n, 4);
    // A point interval then (ties) says nothing of a rate.
    if (!before || before->first < g_.narrowing_from || !(before->second > 0)) return std::nullopt;
    const double h = ci.half_width();
    const double per_doubling =
        std::pow(h / before->second, 1 / std::log2(static_cast<double>(n) / before->first));
    // Narrowing, slowly. An interval that widened belongs to samples that moved during the arm
    // (a loaded CPU's arms settle again): left to the limits, as before.
    if (!(per_doubling > g_.slow_narrowing && per_doubling < 1)) return std::nullopt;
    const double doublings = std::log(target_ / h) / std::log(per_doubling);
    const double needed = n * std::exp2(doublings);
    if (needed <= s_.max_samples && p.measured_s * needed / n <= s_.max_time_s) return std::nullopt;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.2f", per_doubling);
    return StopDecision{
        true, StopCause::converged,
        "median +-" + precision_pct(h) + " after " + std::to_string(n) + " samples, +-" +
            precision_pct(before->second) + " after " + std::to_string(before->first) +
            ": its interval narrows by " + rate +
            " per doubling of the samples, not 0.71 (a median between modes), so the " +
            precision_pct(target_) + " target" + far_from_baseline() +
            " lies beyond the arm's limits; stopped there"};
  }
  // The interval's width shrinks as 1 / sqrt(n): n (w / target)^2 samples reach the target.
  long wanted(int n, const std::optional<MedianInterval>& ci) const {
    if (!ci || !(ci->half_width() > 0)) return 0;
    const double r = ci->half_width() / target_;
    return static_cast<long>(std::min<double>(s_.max_samples, std::ceil(n * r * r)));
  }
  MeasureSettings s_;
  StoppingGoal g_;
  double base_target_;       // the run's target
  double target_;            // the one judged by: base_target_, or wider far from the baseline
  DoublingHistory history_;  // the interval's half-width
};

class StdRel final : public StoppingRule {
 public:
  explicit StdRel(const MeasureSettings& s) : s_(s) {}
  std::string name() const override { return "stdrel"; }
  StopDecision check(const std::vector<double>& v, const Progress& p) override {
    const int n = static_cast<int>(v.size());
    const double noise = robust_noise(v);
    if (minimums_met(s_, n, p)) {
      if (noise <= s_.max_noise)
        return {true, StopCause::noise,
                "noise " + pct(noise) + " <= " + pct(s_.max_noise) + " after " + std::to_string(n) +
                    " samples"};
      // Converged: compare with the noise recorded when there were half as many samples.
      const auto* half = history_.before(n, 2);
      if (half && half->first >= s_.min_samples &&
          std::fabs(noise - half->second) < 0.05 * half->second)
        return {true, StopCause::converged,
                "noise " + pct(noise) + " > " + pct(s_.max_noise) + " but converged (" +
                    pct(half->second) + " at " + std::to_string(half->first) + " samples, " +
                    std::to_string(n) + " now)"};
    }
    history_.record(n, noise);
    return at_limit(s_, n, p, "noise " + pct(noise) + " (target " + pct(s_.max_noise) + " not met)")
        .value_or(StopDecision{});
  }

 private:
  MeasureSettings s_;
  DoublingHistory history_;  // the noise
};

class Fixed final : public StoppingRule {
 public:
  explicit Fixed(int n) : n_(n) {}
  std::string name() const override { return "fixed"; }
  StopDecision check(const std::vector<double>& v, const Progress&) override {
    if (static_cast<int>(v.size()) >= n_)
      return {true, StopCause::fixed, "fixed " + std::to_string(n_) + " samples"};
    return {};
  }

 private:
  int n_;
};

// Another rule, stopped after a wall-clock limit.
class WallLimited final : public StoppingRule {
 public:
  WallLimited(std::unique_ptr<StoppingRule> inner, double limit_s)
      : inner_(std::move(inner)), limit_s_(limit_s) {}
  std::string name() const override { return inner_->name(); }
  std::optional<double> target() const override { return inner_->target(); }
  StopDecision check(const std::vector<double>& v, const Progress& p) override {
    StopDecision d = inner_->check(v, p);
    if (d.stop || p.wall_s < limit_s_ || v.empty()) return d;
    return {true, StopCause::time_limit,
            "wall limit " + secs(limit_s_) + " reached with " + std::to_string(v.size()) +
                " samples (a warm-up arm)"};
  }

 private:
  std::unique_ptr<StoppingRule> inner_;
  double limit_s_;
};

using Factory =
    std::function<std::unique_ptr<StoppingRule>(const MeasureSettings&, const StoppingGoal&)>;

// The stopping rules by name: a new rule is one entry here.
const std::map<std::string, Factory>& registry() {
  static const std::map<std::string, Factory> r = {
      {"precision", [](const MeasureSettings& s,
                       const StoppingGoal& g) { return std::make_unique<Precision>(s, g); }},
      {"stdrel",
       [](const MeasureSettings& s, const StoppingGoal&) { return std::make_unique<StdRel>(s); }},
      {"fixed", [](const MeasureSettings& s,
                   const StoppingGoal&) { return std::make_unique<Fixed>(s.min_samples); }},
  };
  return r;
}

}  // namespace

std::vector<std::string> stopping_rule_names() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : registry()) out.push_back(name);
  return out;
}

double precision_target(const MeasureSettings& s, const StoppingGoal& g) {
  return s.median_precision > 0 ? s.median_precision : kBandFraction * g.noise_band;
}

double far_precision_target(double target, double band, double median_ns, double reference_ns,
                            double clock_ratio) {
  if (!(median_ns > 0) || !(reference_ns > 0) || !(clock_ratio > 0)) return target;
  const double beyond_edge = std::abs(std::log(median_ns / reference_ns)) -
                             std::abs(std::log(clock_ratio)) - std::log1p(band);
  return std::max(target, std::min(band / 2, beyond_edge / 4));
}

std::unique_ptr<StoppingRule> make_stopping_rule(const MeasureSettings& s, const StoppingGoal& g) {
  auto it = registry().find(s.stopping);
  if (it == registry().end())
    throw UsageError("stopping rule '" + s.stopping + "' is unknown: use one of " +
                     join(stopping_rule_names(), ", "));
  std::unique_ptr<StoppingRule> rule = it->second(s, g);
  if (g.wall_limit_s > 0) return std::make_unique<WallLimited>(std::move(rule), g.wall_limit_s);
  return rule;
}

StopEvidence stop_evidence(const StoppingRule& rule, StopCause cause,
                           const std::vector<double>& judged, const StoppingGoal& g) {
  StopEvidence e;
  e.rule = rule.name();
  e.cause = cause;
  e.samples = static_cast<int>(judged.size());
  e.median_ns = judged.empty() ? 0 : median(judged);
  e.confidence = g.confidence;
  e.target = rule.target();
  if (auto ci = median_interval(judged, g.confidence))
    e.interval = MedianPrecision{ci->lo, ci->hi, ci->half_width(), ci->inflation};
  return e;
}

}  // namespace abh::worker
