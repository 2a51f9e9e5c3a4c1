#include "stats/tick_ties.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>

namespace abh {
namespace {

// A group of equal values in the sorted samples and its mid-distribution level.
struct Group {
  double value = 0;
  double level = 0;                // (count below + count / 2) / n
  std::size_t first = 0, end = 0;  // its positions in the sorted samples
};

std::vector<Group> groups_of(const std::vector<double>& sorted) {
  const double n = static_cast<double>(sorted.size());
  std::vector<Group> groups;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    groups.push_back(
        {sorted[i], (static_cast<double>(i) + static_cast<double>(j - i) / 2) / n, i, j});
    i = j;
  }
  return groups;
}

// Q_mid(q) on the segment between groups g and g + 1 (q beyond the outermost levels stays at the
// outermost values).
double between(const Group& a, const Group& b, double q) {
  if (q <= a.level) return a.value;
  if (q >= b.level) return b.value;
  return a.value + (b.value - a.value) * (q - a.level) / (b.level - a.level);
}

// SplitMix64's finalizer: a bijection of 64-bit integers that scatters neighbours.
std::uint64_t scramble(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

bool on_tick_grid(std::span<const double> samples, double tick_ns) {
  if (!(tick_ns > 0) || samples.empty()) return false;
  std::size_t on = 0;
  for (double x : samples) {
    if (!std::isfinite(x)) return false;  // not a timer's reading: left for the caller to refuse
    if (std::abs(x - tick_ns * std::round(x / tick_ns)) <= tick_ns / 4) ++on;
  }
  return static_cast<double>(on) >= 0.99 * static_cast<double>(samples.size());
}

double clock_tick_ns(std::span<const double> gaps) {
  std::vector<double> small;
  for (double g : gaps)
    if (g >= 0 && g < 1000) small.push_back(g);
  if (small.size() < 100) return 0;
  const double most = *std::max_element(small.begin(), small.end());
  const double least_share = 0.01 * static_cast<double>(small.size());
  for (int tick = std::min(1000, static_cast<int>(most)); tick >= 1; --tick) {
    if (!on_tick_grid(small, tick)) continue;
    std::map<long, int> multiples;
    for (double g : small) ++multiples[std::lround(g / tick)];
    int filled = 0;
    for (const auto& [k, count] : multiples) filled += count >= least_share ? 1 : 0;
    if (filled >= 2) return tick;
  }
  return 0;
}

std::vector<double> spread_ties(std::span<const double> samples, double tick_ns) {
  if (!on_tick_grid(samples, tick_ns)) return {samples.begin(), samples.end()};
  std::vector<double> snapped;
  snapped.reserve(samples.size());
  for (double x : samples) snapped.push_back(tick_ns * std::round(x / tick_ns));
  return spread_groups(snapped);
}

std::vector<double> spread_groups(std::span<const double> samples) {
  const std::size_t n = samples.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Within a group, which sample takes which of its spread values is arbitrary, but it must not
  // follow the order they were taken in: the first samples would all fall below the median and
  // the last ones above, a trend the interval's dependence check (median_interval.hpp) would read
  // as strongly dependent samples. A fixed scramble of the positions keeps it reproducible.
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (samples[a] != samples[b]) return samples[a] < samples[b];
    return scramble(a) < scramble(b);
  });
  std::vector<double> sorted(n);
  for (std::size_t i = 0; i < n; ++i) sorted[i] = samples[order[i]];
  const std::vector<Group> groups = groups_of(sorted);
  std::vector<double> out(samples.begin(), samples.end());
  if (groups.size() == n) return out;  // no ties
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i = groups[g].first; i < groups[g].end; ++i) {
      const double q = (static_cast<double>(i) + 0.5) / static_cast<double>(n);
      double v = groups[g].value;
      if (q < groups[g].level && g > 0) v = between(groups[g - 1], groups[g], q);
      if (q > groups[g].level && g + 1 < groups.size()) v = between(groups[g], groups[g + 1], q);
      out[order[i]] = v;
    }
  return out;
}

}  // namespace abh
