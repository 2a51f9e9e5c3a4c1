#include "stats/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "system/error.hpp"

namespace abh {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::same:
      return "same";
    case Verdict::ambiguous:
      return "ambiguous";
    case Verdict::unstable:
      return "unstable";
    case Verdict::failed:
      return "failed";
  }
  throw Error("invalid verdict value " + std::to_string(static_cast<int>(v)));
}

std::vector<Verdict> all_verdicts() {
  return {Verdict::faster,    Verdict::slower,   Verdict::same,
          Verdict::ambiguous, Verdict::unstable, Verdict::failed};
}

Verdict verdict_from_string(const std::string& s) {
  for (Verdict v : all_verdicts())
    if (to_string(v) == s) return v;
  throw Error("unknown verdict '" + s +
              "': expected faster, slower, same, ambiguous, unstable or failed");
}

double median_in_place(std::span<double> v) {
  if (v.empty()) throw Error("median of no samples");
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double hi = *mid;
  if (v.size() % 2) return hi;
  // nth_element leaves the lower half before `mid`; its largest is the other middle value.
  double lo = *std::max_element(v.begin(), mid);
  return 0.5 * (lo + hi);
}

double median(std::vector<double> v) {
  return median_in_place(v);
}

RobustSpread robust_spread(std::span<const double> v) {
  std::vector<double> dev(v.begin(), v.end());
  RobustSpread s;
  s.median = median_in_place(dev);
  for (std::size_t i = 0; i < v.size(); ++i) dev[i] = std::fabs(v[i] - s.median);
  s.sigma = 1.4826 * median_in_place(dev);
  return s;
}

double robust_noise(std::span<const double> v) {
  if (v.size() < 2) return INFINITY;
  const RobustSpread s = robust_spread(v);
  return s.sigma / s.median;
}

std::optional<double> drift(std::span<const double> baseline_medians) {
  if (baseline_medians.size() < 2) return std::nullopt;
  return baseline_medians.back() / baseline_medians.front();
}

double relative_stddev(std::span<const double> v) {
  if (v.size() < 2) return 0;
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  return mean != 0 ? sd / mean : 0;
}

double quantile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw Error("quantile of no values");
  if (!(q >= 0 && q <= 1)) throw Error("quantile level " + std::to_string(q) + " not in [0, 1]");
  double h = q * static_cast<double>(sorted.size() - 1);
  auto i = static_cast<std::size_t>(std::floor(h));
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (h - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

Interval percentile_interval(std::vector<double>& reps, double confidence) {
  std::sort(reps.begin(), reps.end());
  double alpha = 1 - confidence;
  return {quantile_sorted(reps, alpha / 2), quantile_sorted(reps, 1 - alpha / 2)};
}

std::uint64_t Rng::below(std::uint64_t n) {
  if (n == 0) throw Error("Rng::below(0): empty range");
  // 2^64 mod n, computed in 64-bit arithmetic: values below it form the incomplete block.
  std::uint64_t reject_below = (0 - n) % n;
  for (;;) {
    std::uint64_t r = engine_();
    if (r >= reject_below) return r % n;
  }
}

double Rng::uniform() {
  // 53 random bits, centred in their cell: never exactly 0 or 1 (log(0) would follow).
  return (static_cast<double>(engine_() >> 11) + 0.5) * 0x1.0p-53;
}

double Rng::normal() {
  for (;;) {
    double u = 2 * uniform() - 1, v = 2 * uniform() - 1;
    double s = u * u + v * v;
    if (s < 1 && s > 0) return u * std::sqrt(-2 * std::log(s) / s);
  }
}

double Rng::gamma(double shape) {
  if (!(shape > 0)) throw Error("Rng::gamma: shape " + std::to_string(shape) + " <= 0");
  // Below 1, Gamma(a) = Gamma(a + 1) * U^(1/a) (Marsaglia & Tsang's boost).
  if (shape < 1) return gamma(shape + 1) * std::pow(uniform(), 1 / shape);
  // Marsaglia & Tsang (2000), "A simple method for generating gamma variables".
  const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    double x = normal(), v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

double Rng::beta(double a, double b) {
  double x = gamma(a), y = gamma(b);
  return x / (x + y);
}

double Rng::chi_square(double df) {
  return 2 * gamma(df / 2);
}

double resampled_median(std::span<const double> sorted, Rng& rng) {
  const std::size_t n = sorted.size();
  if (n == 0) throw Error("median of no samples");
  auto at = [&](double u) {  // sorted[floor(n * u)], guarded against u rounding up to 1
    return sorted[std::min(n - 1, static_cast<std::size_t>(static_cast<double>(n) * u))];
  };
  if (n % 2) {
    const double k = static_cast<double>(n / 2 + 1);  // the middle order statistic, 1-based
    return at(rng.beta(k, static_cast<double>(n) + 1 - k));
  }
  const double k = static_cast<double>(n / 2);  // lower middle; the median averages k and k+1
  double uk = rng.beta(k, static_cast<double>(n) + 1 - k);
  double v = 1 - std::pow(rng.uniform(), 1 / (static_cast<double>(n) - k));  // Beta(1, n - k)
  double uk1 = uk + (1 - uk) * v;
  return 0.5 * (at(uk) + at(uk1));
}

double clock_slope(std::span<const double> ns, std::span<const double> mhz) {
  if (ns.size() != mhz.size())
    throw Error("clock_slope: " + std::to_string(ns.size()) + " times but " +
                std::to_string(mhz.size()) + " clock readings");
  const std::size_t n = ns.size();
  if (n < 3) return 0;
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::log(mhz[i]);
    y[i] = std::log(ns[i]);
  }
  std::vector<bool> use(n, true);
  double slope = 0;
  for (int pass = 0; pass < 2; ++pass) {
    double sx = 0, sy = 0, m = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (use[i]) sx += x[i], sy += y[i], ++m;
    if (m < 3) break;
    const double mx = sx / m, my = sy / m;
    double sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (use[i]) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
    // A clock that did not move (1e-10 ~ a spread of 0.001 %) carries no slope.
    if (sxx / m < 1e-10) return 0;
    slope = sxy / sxx;
    if (pass == 1) break;
    std::vector<double> res(n);
    for (std::size_t i = 0; i < n; ++i) res[i] = y[i] - my - slope * (x[i] - mx);
    const RobustSpread r = robust_spread(res);
    for (std::size_t i = 0; i < n; ++i) use[i] = std::fabs(res[i] - r.median) <= 5 * r.sigma;
  }
  return std::clamp(slope, -1.0, 0.0);
}

std::vector<double> clock_adjusted(std::span<const double> ns, std::span<const double> mhz,
                                   double slope, double ref_mhz) {
  if (ns.size() != mhz.size())
    throw Error("clock_adjusted: " + std::to_string(ns.size()) + " times but " +
                std::to_string(mhz.size()) + " clock readings");
  std::vector<double> out(ns.size());
  for (std::size_t i = 0; i < ns.size(); ++i) out[i] = ns[i] * std::pow(ref_mhz / mhz[i], slope);
  return out;
}

std::uint64_t stream_seed(std::uint64_t seed, std::string_view key) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  // SplitMix64 finalizer over the combination, so nearby seeds give unrelated streams.
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (h | 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

void check_arms(const std::vector<std::vector<double>>& arms, const char* which) {
  if (arms.empty()) throw Error(std::string("speedup needs at least one ") + which + " arm");
  for (const auto& a : arms)
    if (a.empty()) throw Error(std::string(which) + " arm has no samples");
}

// One variant's arms, sorted for resampled_median, with their medians.
struct VariantArms {
  std::vector<std::vector<double>> sorted;
  std::vector<double> medians;
  double mean_of_medians = 0;
};

VariantArms variant_arms(const std::vector<std::vector<double>>& arms, const char* which) {
  check_arms(arms, which);
  VariantArms v;
  v.sorted = arms;
  double sum = 0;
  for (auto& a : v.sorted) {
    std::sort(a.begin(), a.end());
    double m = median(a);
    if (!(m > 0) || !std::isfinite(m))
      throw Error(std::string(which) + " arm has median " + std::to_string(m) +
                  " ns: times must be positive and finite");
    v.medians.push_back(m);
    sum += m;
  }
  v.mean_of_medians = sum / static_cast<double>(arms.size());
  return v;
}

// Running mean and variance of one arm's log replicate medians (Welford).
struct LogMoments {
  double n = 0, mean = 0, m2 = 0;
  void add(double x) {
    n += 1;
    double d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
  }
  double variance() const { return n > 1 ? m2 / (n - 1) : 0; }
};

// One bootstrap replicate of a variant's mean of medians: each arm resampled with replacement to
// its own size; each arm's log replicate median also goes to its moments.
double resampled_mean(const VariantArms& v, std::vector<LogMoments>& moments, Rng& rng) {
  double sum = 0;
  for (std::size_t i = 0; i < v.sorted.size(); ++i) {
    double m = resampled_median(v.sorted[i], rng);
    moments[i].add(std::log(m));
    sum += m;
  }
  return sum / static_cast<double>(v.sorted.size());
}

std::vector<double> logs_of(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::log(x));
  return out;
}

// A draw of the between-arm term on the log scale, kept finite: with 1 df (Cauchy tails) a draw
// can be arbitrarily large, and e^30 is already far beyond any interval a reader could use.
double clamp_log(double x) {
  return std::clamp(x, -30.0, 30.0);
}

}  // namespace

ArmBootstrap bootstrap_arms(const std::vector<std::vector<double>>& a_arms,
                            const std::vector<std::vector<double>>& b_arms, const StatsOptions& opt,
                            std::uint64_t stream) {
  validate(opt);
  const VariantArms a = variant_arms(a_arms, "baseline (A)");
  const VariantArms b = variant_arms(b_arms, "candidate (B)");
  ArmBootstrap e;
  e.baseline_ns = a.mean_of_medians;
  e.candidate_ns = b.mean_of_medians;
  e.baseline_arms = static_cast<int>(a_arms.size());
  e.candidate_arms = static_cast<int>(b_arms.size());
  e.stream = stream;
  Rng rng(stream);
  auto n = static_cast<std::size_t>(opt.resamples);
  e.rep_baseline_ns.resize(n);
  e.rep_candidate_ns.resize(n);
  std::vector<LogMoments> a_moments(a_arms.size()), b_moments(b_arms.size());
  for (std::size_t r = 0; r < n; ++r) {
    e.rep_baseline_ns[r] = resampled_mean(a, a_moments, rng);
    e.rep_candidate_ns[r] = resampled_mean(b, b_moments, rng);
  }
  double within = 0;
  for (const auto* moments : {&a_moments, &b_moments})
    for (const auto& m : *moments) within += m.variance();
  within /= static_cast<double>(a_arms.size() + b_arms.size());
  e.own = own_arm_variation(logs_of(a.medians), logs_of(b.medians), within);
  return e;
}

RatioEstimate bootstrap_ratio(const ArmBootstrap& arms, const ArmVariation& prior,
                              const StatsOptions& opt) {
  validate(opt);
  RatioEstimate e;
  e.baseline_ns = arms.baseline_ns;
  e.candidate_ns = arms.candidate_ns;
  e.ratio = e.baseline_ns / e.candidate_ns;
  e.own = arms.own;
  e.variation = moderated_arm_variation(arms.own, prior);
  e.rep_baseline_ns = arms.rep_baseline_ns;
  e.rep_candidate_ns = arms.rep_candidate_ns;
  const std::size_t n = e.rep_baseline_ns.size();
  if (e.variation.df > 0 && e.variation.variance > 0) {
    // Its own stream: the sample-level replicates above stay what they were without this term.
    Rng rng(stream_seed(arms.stream, "between-arm"));
    const double nu = e.variation.df, sigma = std::sqrt(e.variation.variance);
    const double sa = sigma / std::sqrt(arms.baseline_arms);
    const double sb = sigma / std::sqrt(arms.candidate_arms);
    for (std::size_t r = 0; r < n; ++r) {
      const double scale = std::sqrt(nu / rng.chi_square(nu));
      e.rep_baseline_ns[r] *= std::exp(clamp_log(sa * rng.normal() * scale));
      e.rep_candidate_ns[r] *= std::exp(clamp_log(sb * rng.normal() * scale));
    }
  }
  std::vector<double> ratios(n);
  for (std::size_t r = 0; r < n; ++r) ratios[r] = e.rep_baseline_ns[r] / e.rep_candidate_ns[r];
  e.ci = percentile_interval(ratios, opt.confidence);
  return e;
}

RatioEstimate bootstrap_ratio(const std::vector<std::vector<double>>& a_arms,
                              const std::vector<std::vector<double>>& b_arms,
                              const StatsOptions& opt, std::uint64_t stream,
                              const ArmVariation& prior) {
  return bootstrap_ratio(bootstrap_arms(a_arms, b_arms, opt, stream), prior, opt);
}

AggregateEstimate aggregate(const std::vector<const RatioEstimate*>& shapes,
                            const StatsOptions& opt) {
  if (shapes.empty()) throw Error("aggregate over no shapes");
  std::size_t n = shapes.front()->rep_baseline_ns.size();
  for (const auto* s : shapes)
    if (s->rep_baseline_ns.size() != n || s->rep_candidate_ns.size() != n)
      throw Error("aggregate: shapes were bootstrapped with different numbers of resamples");

  AggregateEstimate a;
  a.shapes = static_cast<int>(shapes.size());
  double log_sum = 0;
  for (const auto* s : shapes) {
    log_sum += std::log(s->ratio);
    a.baseline_total_ns += s->baseline_ns;
    a.candidate_total_ns += s->candidate_ns;
  }
  a.geomean = std::exp(log_sum / static_cast<double>(shapes.size()));
  a.summed_ratio = a.baseline_total_ns / a.candidate_total_ns;

  // Replicate r of an aggregate combines replicate r of every shape. Shapes are measured in
  // separate processes, so their replicates are independent and pairing them by index is a valid
  // draw from the joint distribution.
  std::vector<double> geo(n), summed(n);
  for (std::size_t r = 0; r < n; ++r) {
    double logs = 0, base = 0, cand = 0;
    for (const auto* s : shapes) {
      logs += std::log(s->rep_baseline_ns[r] / s->rep_candidate_ns[r]);
      base += s->rep_baseline_ns[r];
      cand += s->rep_candidate_ns[r];
    }
    geo[r] = std::exp(logs / static_cast<double>(shapes.size()));
    summed[r] = base / cand;
  }
  a.geomean_ci = percentile_interval(geo, opt.confidence);
  a.summed_ratio_ci = percentile_interval(summed, opt.confidence);
  return a;
}

Verdict classify(const Interval& ci, std::optional<double> drift, double band) {
  Verdict v = Verdict::ambiguous;
  if (ci.lo > 1 + band)
    v = Verdict::faster;
  else if (ci.hi < 1 - band)
    v = Verdict::slower;
  else if (ci.lo >= 1 - band && ci.hi <= 1 + band)
    v = Verdict::same;
  const bool drifted = drift && std::abs(*drift - 1) > band;
  return drifted && v == Verdict::ambiguous ? Verdict::unstable : v;
}

Interval drift_widened(const Interval& ci, std::span<const double> baseline_medians) {
  if (baseline_medians.empty()) throw Error("drift_widened: no baseline medians");
  const auto [lo, hi] = std::minmax_element(baseline_medians.begin(), baseline_medians.end());
  double mean = 0;
  for (double m : baseline_medians) mean += m;
  mean /= static_cast<double>(baseline_medians.size());
  return {ci.lo * *lo / mean, ci.hi * *hi / mean};
}

}  // namespace abh
