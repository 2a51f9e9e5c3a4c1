#include "stats/median_interval.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace abh {

double MedianInterval::half_width() const {
  return (hi - lo) / 2 / median;
}

long median_rank(long n, double confidence) {
  if (n < 2) return 0;
  // Walk outward from the middle: C(j) = P(j <= B <= n - j) grows by 2 pmf(j - 1) as j drops by
  // one (the binomial of 1/2 is symmetric), until it reaches the confidence.
  long j = n / 2;
  const double dn = static_cast<double>(n);
  const double dj = static_cast<double>(j);
  double pmf = std::exp(std::lgamma(dn + 1) - std::lgamma(dj + 1) - std::lgamma(dn - dj + 1) -
                        dn * std::log(2.0));
  double covered = n % 2 == 0 ? pmf : 2 * pmf;  // P(B = n/2), or P(B = (n-1)/2 or (n+1)/2)
  while (covered < confidence) {
    if (j == 1) return 0;
    pmf *= static_cast<double>(j) / static_cast<double>(n - j + 1);  // pmf(j - 1)
    covered += 2 * pmf;
    --j;
  }
  return j;
}

double rank_inflation(std::span<const double> samples, double median) {
  const size_t n = samples.size();
  const size_t blocks = static_cast<size_t>(std::sqrt(static_cast<double>(n)));
  if (blocks < 4) return 1;
  const size_t len = n / blocks;
  const size_t used = blocks * len;
  auto below = [median](double x) { return x < median ? 1.0 : x == median ? 0.5 : 0.0; };
  double total = 0;
  for (size_t i = 0; i < used; ++i) total += below(samples[i]);
  const double mean = total / static_cast<double>(used);
  double each = 0, between = 0;
  for (size_t b = 0; b < blocks; ++b) {
    double sum = 0;
    for (size_t i = b * len; i < (b + 1) * len; ++i) {
      const double d = below(samples[i]) - mean;
      each += d * d;
      sum += below(samples[i]);
    }
    const double d = sum / static_cast<double>(len) - mean;
    between += d * d;
  }
  const double var_each = each / static_cast<double>(used - 1);
  if (!(var_each > 0)) return 1;
  const double var_blocks = between / static_cast<double>(blocks - 1);
  return std::max(1.0, static_cast<double>(len) * var_blocks / var_each);
}

std::optional<MedianInterval> median_interval(std::span<const double> samples, double confidence) {
  const long n = static_cast<long>(samples.size());
  if (n == 0) return std::nullopt;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  MedianInterval m;
  m.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  m.confidence = confidence;
  m.inflation = rank_inflation(samples, m.median);
  const long effective = static_cast<long>(static_cast<double>(n) / m.inflation);
  const long j = median_rank(effective, confidence);
  if (j == 0) return std::nullopt;
  // The j-th of `effective` order statistics sits at quantile j / (effective + 1): that quantile
  // of all n samples, rounded outward (with tau = 1 it is the j-th exactly).
  const long r = std::max(1L, j * (n + 1) / (effective + 1));
  m.lo = sorted[r - 1];
  m.hi = sorted[n - r];
  return m;
}

}  // namespace abh
