// Variation between whole arms, the second level of a shape's interval (docs/statistics.md,
// "Variation between arms"): each shape's own estimate, the prior it borrows from the other shapes
// of its run, the moderation of the two, and the shapes whose arms conflict with their prior.
// stats/statistics.hpp draws the interval from them.
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace abh {

// --- Variation between arms --------------------------------------------------------------------
//
// The unit that varies is the arm, not the sample: each arm is a process of its own, with its own
// placement, clock and machine state at that moment, and whole arms differ by more than their
// samples' noise explains (CPU A/A arms on a loaded 2-vCPU machine: medians 1x or 1.85x of each
// other; GPU arms at one SM clock: within about 0.1 %). The model, per shape, on the log scale:
//
//   log(median of arm i of variant v) = mu_v + b_i + e_i
//
// b_i ~ N(0, sigma_b^2) is the arm's own offset, with sigma_b^2 common to both variants of the
// shape; e_i is the sampling error of the arm's median, which the sample bootstrap measures.
// docs/statistics.md states the assumptions and the evidence.

// An estimate of sigma_b^2 (log scale: 1e-4 is a 1 % standard deviation between arms) and its
// degrees of freedom.
struct ArmVariation {
  double variance = 0;
  double df = 0;
  bool operator==(const ArmVariation&) const = default;
};

// The shape's own estimate: the pooled variance of log arm medians around each variant's mean
// (df = arms - 2; one ABA block has 1: A1 against A2), less the mean sampling variance of one arm's
// log median (`within_variance`, which the pooled variance also contains), floored at 0. df 0 when
// neither variant has two arms.
ArmVariation own_arm_variation(std::span<const double> log_baseline_medians,
                               std::span<const double> log_candidate_medians,
                               double within_variance);

// The prior a shape borrows from the other shapes of its run: their estimates pooled (variance
// weighted by df), with df summed but capped at kPriorDfCap, so that one shape's own arms still
// count when the shapes of a grid differ in how much their arms vary.
inline constexpr double kPriorDfCap = 10;
ArmVariation pooled_arm_variation(const std::vector<ArmVariation>& others);
// For each shape i, pooled_arm_variation of every other shape's estimate (entries without one are
// skipped), in one pass over all of them instead of one pass per shape. Equal to calling
// pooled_arm_variation per shape up to the order of the additions (last-bit differences).
std::vector<ArmVariation> leave_one_out_priors(const std::vector<std::optional<ArmVariation>>& own);

// Empirical-Bayes moderation, as limma moderates gene-wise variances: (d0 s0^2 + d s^2) / (d0 + d)
// with d0 + d degrees of freedom. One ABA block (d = 1) alone would need t(0.975, 1) = 12.7 and
// hide any real change; pooled with the other shapes' arms it does not, yet a shape whose own A1
// and A2 disagree still widens its interval.
ArmVariation moderated_arm_variation(const ArmVariation& own, const ArmVariation& prior);

// A shape's own estimate conflicts with its prior when an F test says its arms vary more than the
// prior allows at `level` (StatsOptions::prior_conflict_level): own variance above the F(d, d0)
// quantile times the prior variance, or times `floor_variance` when that is larger (a between-arm
// spread too small to matter to the comparison conflicts with nothing). Such a shape is not the
// kind of shape the prior describes: a whole arm 7.6 % off its pairs (an H200 A/A of the
// reference grid) moderated with the other shapes' 0.1 % gave an identical build an interval of
// [0.939, 0.989], `slower`, and widened every other shape's prior until all 15 were `ambiguous`.
// level 0: never.
bool conflicts_with_prior(const ArmVariation& own, const ArmVariation& prior, double level,
                          double floor_variance);

// leave_one_out_priors, robust to the shapes that conflict with theirs: those are left out of
// every other shape's prior. Each shape is tested against a reference from the other shapes: with
// `median_reference`, the median of their estimates (each scaled by the median of chi2(d) / d for
// its degrees of freedom d, so that shapes that vary alike give their common variance), else
// their pooled prior (plans and reports written before read so). The pooled prior is a mean, and
// shapes whose processes fall at two levels widen it until they hide one another: in an H200 A/A
// of the bf16 reference grid, four of sixteen shapes whose arms read at two levels 1-2.5 % apart
// left every quiet shape a prior of sd 0.43 % where their own arms agreed to 0.0-0.19 %, none was
// found, and thirteen shapes decided after one block were given another. A median is moved by
// such shapes only once they are half of the run. The shapes found then borrow from one another
// only (their pooled estimates, leaving each out; none when one alone is found): they vary alike
// more than they vary like the rest, and having been found for varying much, they lend a prior
// that errs wide. Tested against the pooled prior, they get none (their interval rests on their
// own arms alone). With `own_floor`, a shape found lends its peers' degrees of freedom but never
// their spread where that is below its own: in an H100 A/A of the reference grid, a shape whose
// processes read 100.5 and 95.7 us (A: 100.6, 100.5, 95.6, 100.6; B: 95.9, 95.8) borrowed sd
// 1.3 % from a peer whose arms sat 1 % apart, where its own read 2.2 %, and an identical build
// was called `faster` with [1.013, 1.061].
struct RobustPriors {
  std::vector<ArmVariation> priors;
  std::vector<bool> conflict;  // per shape: conflicted with its reference
};
RobustPriors robust_priors(const std::vector<std::optional<ArmVariation>>& own, double level,
                           double floor_variance, bool median_reference, bool own_floor);

// --- Disturbed arms ----------------------------------------------------------------------------
//
// The model above has normal arm offsets; a disturbed arm is not one of them. On a shared 2-core
// CI machine one arm of an A/A/A read 411 us where the variant's seven other arms read 217.3-217.9
// us (another process held its CPU for part of it); its mean of medians then moved by 11 %, and
// its own variance widened the interval to [0.79, 1.03], ambiguous on an identical build. Such an
// arm is told from the others by the spread of the shape's arms themselves, which needs several
// arms of its variant: A1, B, A2 alone cannot say which of A1 and A2 was disturbed.

// The fewest arms of a variant among which a disturbed one is looked for.
inline constexpr std::size_t kMinArmsForOutliers = 3;

// For each variant's log arm medians (in arm order), which arms lie so far from the median of
// their variant's arms that they are left out of the estimate: beyond `sigmas` times the shape's
// robust between-arm spread (1.4826 * MAD of every arm's distance from its variant's median, over
// the variants with kMinArmsForOutliers arms or more) and beyond `floor` (log scale; the caller
// passes half the noise band: an arm closer than that changes no verdict whichever way it is
// taken). The median and the MAD hold while fewer than half of the arms are disturbed: a variant
// with half of its arms or more that far off has no majority of normal arms, varies in some other
// way, and keeps them all, so that its interval widens. An arm within that limit of some arm of
// the other variant is kept as well: fresh processes of one kernel can fall at discrete levels
// (an eager PyTorch RMSNorm on an H200 at 16.66 and 16.89 us, measurements.md §48), and a
// baseline arm at the level where the candidate's arms sit is evidence that the level is the
// process's, not the build's. Left out, it made an identical build `faster` by 1.4 % twice in one
// call. A load that slowed one arm lies far from every arm of both.
// sigmas 0: none is ever left out.
struct OutlierArms {
  std::vector<bool> a, b;  // per arm of the baseline and of the candidate
};
OutlierArms outlier_arms(std::span<const double> log_a, std::span<const double> log_b,
                         double sigmas, double floor);

}  // namespace abh
