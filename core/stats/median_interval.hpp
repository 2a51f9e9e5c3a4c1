// How precisely an arm's samples pin down their median: a distribution-free confidence interval
// from order statistics, widened for samples that are not independent. The worker's default
// stopping rule stops an arm once this interval is narrow enough (worker/stopping.hpp);
// docs/statistics.md ("How precise an arm's median is") explains it for a reviewer.
//
// Order statistics. For n independent samples the count below the true median is Binomial(n, 1/2)
// whatever their distribution, so [x(j), x(n+1-j)] (the j-th smallest and the j-th largest) holds
// the true median with probability 1 - 2 P(B <= j - 1). No normality is assumed: a skewed
// distribution or a rare preempted sample moves the interval no more than it moves the median.
//
// Dependence. Consecutive samples are not independent: a GPU's clock wanders over milliseconds, a
// CPU's caches and frequency over longer, so runs of samples share a bias. The count below the
// median then varies by more than the binomial's n/4, and the plain interval is too narrow (AR(1)
// samples with correlation 0.8 between neighbours: the plain 95 % interval held the median in 59 %
// of 500 trials of 2000 samples, this one in 95 %; tests/unit/test_median_interval.cpp). The
// interval measures that excess on the samples themselves: it cuts the indicators "below the
// median" (1/2 for a tie) into about sqrt(n) consecutive blocks and compares the variance of the
// block means with what independent indicators would give (the batch-means estimate of the
// variance inflation, the standard one for quantiles of correlated simulation output). With
// inflation tau the samples are worth n / tau independent ones: the binomial interval of that
// effective count is read off as quantiles of all n samples. tau is never taken below 1, so
// independent samples keep the exact interval. The median itself stays the median of all samples,
// the number the report compares.
#pragma once

#include <optional>
#include <span>

namespace abh {

struct MedianInterval {
  double median = 0;
  double lo = 0, hi = 0;      // the interval's ends: order statistics of the samples
  double confidence = 0;      // its two-sided level
  double inflation = 1;       // tau >= 1; the samples count as samples / inflation independent ones
  double half_width() const;  // (hi - lo) / 2 / median: the precision, relative to the median
};

// The interval of the median of `samples` (positive, in the order they were taken) at
// `confidence` in (0, 1); nullopt when the samples are too few for an interval at that level
// (fewer than 6 effective samples at 95 %: even the extreme order statistics hold the median with
// probability 1 - 2^(1-n) only).
std::optional<MedianInterval> median_interval(std::span<const double> samples, double confidence);

// The variance inflation of the count of samples below `median`, by batch means over about
// sqrt(n) consecutive blocks; at least 1, and 1 with fewer than 4 blocks (too few to judge).
double rank_inflation(std::span<const double> samples, double median);

// The largest j >= 1 with P(j <= B <= n - j) >= confidence for B ~ Binomial(n, 1/2): the ranks of
// the exact order-statistic interval of the median of n independent samples; 0 when none.
long median_rank(long n, double confidence);

}  // namespace abh
