// pytest-benchmark's JSON (the file `pytest --benchmark-json` writes, version 4): one benchmark
// per compared shape and variant, grouped by shape, so `pytest-benchmark compare` and the tools
// that read its files put the baseline and the candidate of a shape side by side. Its statistics
// are those pytest-benchmark computes (quartiles by its method), in seconds, over the pooled raw
// samples of the variant's arms: as measured, not moved to one SM clock, so on a GPU they can
// differ from the report's clock-normalized medians; the report's own estimate (median, speedup,
// interval, verdict) is in each benchmark's extra_info. Failed shapes are left out, and said so.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>

#include "report/export.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

// The median of sorted data.
double median_of(const std::vector<double>& d, std::size_t from, std::size_t to) {
  const std::size_t n = to - from, mid = from + n / 2;
  return n % 2 ? d[mid] : (d[mid - 1] + d[mid]) / 2;
}

// pytest-benchmark's quartiles (its stats.py, after Wikipedia's "Computing methods"): method 3 for
// an odd count, method 1 (median of each half) for an even one. `sorted` has at least one value.
std::pair<double, double> quartiles(const std::vector<double>& d) {
  const std::size_t n = d.size();
  if (n == 1) return {d[0], d[0]};
  if (n % 2 == 0) return {median_of(d, 0, n / 2), median_of(d, n / 2, n)};
  const std::size_t k = n / 4;
  if (n % 4 == 1) return {0.25 * d[k - 1] + 0.75 * d[k], 0.75 * d[3 * k] + 0.25 * d[3 * k + 1]};
  return {0.75 * d[k] + 0.25 * d[k + 1], 0.25 * d[3 * k + 1] + 0.75 * d[3 * k + 2]};
}

json sample_stats(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  const double n = static_cast<double>(s.size());
  const double total = std::accumulate(s.begin(), s.end(), 0.0);
  const double mean = total / n;
  double ss = 0;
  for (double v : s) ss += (v - mean) * (v - mean);
  const double stddev = s.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  const auto [q1, q3] = quartiles(s);
  const double iqr = q3 - q1, lo_fence = q1 - 1.5 * iqr, hi_fence = q3 + 1.5 * iqr;
  long iqr_outliers = 0, stddev_outliers = 0;
  for (double v : s) {
    iqr_outliers += v < lo_fence || v > hi_fence;
    stddev_outliers += v < mean - stddev || v > mean + stddev;
  }
  // As pytest-benchmark computes them: the lowest datum at or above the lower fence, and the first
  // datum above the upper fence (the highest datum when none is above it).
  const double ld15iqr = *std::lower_bound(s.begin(), s.end(), lo_fence);
  const auto above = std::upper_bound(s.begin(), s.end(), hi_fence);
  const double hd15iqr = above == s.end() ? s.back() : *above;
  return {{"min", s.front()},
          {"max", s.back()},
          {"mean", mean},
          {"stddev", stddev},
          {"rounds", s.size()},
          {"median", median_of(s, 0, s.size())},
          {"iqr", iqr},
          {"q1", q1},
          {"q3", q3},
          {"iqr_outliers", iqr_outliers},
          {"stddev_outliers", stddev_outliers},
          {"outliers", std::to_string(stddev_outliers) + ";" + std::to_string(iqr_outliers)},
          {"ld15iqr", ld15iqr},
          {"hd15iqr", hd15iqr},
          {"ops", 1 / mean},
          {"total", total},
          {"iterations", 1}};
}

// The raw samples of one variant's valid arms of one shape, in seconds, with the timer they used
// and whether the arms warmed up before sampling.
struct Pooled {
  std::vector<double> seconds;
  std::string timer;
  bool warmup = false;
};

// The outcomes of each shape, grouped once: a scan of every outcome per shape would cost a 50,000-
// shape grid 50,000 passes over its 150,000 arms.
using OutcomesByShape = std::map<std::string, std::vector<const ArmOutcome*>>;

OutcomesByShape by_shape(const std::vector<ArmOutcome>& outcomes) {
  OutcomesByShape m;
  for (const ArmOutcome& o : outcomes) m[o.task.shape].push_back(&o);
  return m;
}

Pooled pooled_samples(const OutcomesByShape& outcomes, const std::string& shape,
                      const std::string& variant) {
  Pooled p;
  if (const auto it = outcomes.find(shape); it != outcomes.end())
    for (const ArmOutcome* o : it->second) {
      if (!o->result || o->task.variant != variant) continue;
      const Measurement& m = o->result->measurement;
      p.timer = m.timer;
      p.warmup = p.warmup || m.warmup_iterations > 0;
      for (double ns : m.samples_ns) p.seconds.push_back(ns * 1e-9);
    }
  // A compared shape has a valid result with samples for every arm; none here is a bug upstream.
  if (p.seconds.empty())
    throw Error("export: no samples of the " + variant + " arms of shape " + shape);
  return p;
}

const VariantProvenance* variant_named(const Report& r, const std::string& name) {
  for (const auto& v : r.provenance.variants)
    if (v.name == name) return &v;
  return nullptr;
}

json benchmark(const Report& r, const ShapeRow& row, const std::string& variant,
               const OutcomesByShape& outcomes) {
  Pooled samples = pooled_samples(outcomes, row.shape, variant);
  const VariantProvenance* v = variant_named(r, variant);
  json extra = {
      {"variant", variant},
      {"timing", row.timing},
      {"abharness_median_ns", variant == "baseline" ? *row.baseline_ns : *row.candidate_ns},
      {"speedup", *row.speedup},
      {"speedup_ci", {row.ci->lo, row.ci->hi}},
      {"verdict", to_string(row.verdict)}};
  if (v) extra["revision"] = {{"requested", v->source.requested}, {"commit", v->source.commit}};
  const std::string name = variant + "[" + row.shape + "]";
  return {{"group", row.shape},
          {"name", name},
          {"fullname", "abharness::" + name},
          {"params", row.params},
          {"param", row.shape},
          {"extra_info", extra},
          {"options", {{"timer", samples.timer}, {"warmup", samples.warmup}}},
          {"stats", sample_stats(std::move(samples.seconds))}};
}

json machine_info(const Report& r) {
  if (r.provenance.machine.empty()) return json::object();
  const Environment& m = r.provenance.machine.front();
  json info = {{"node", m.hostname},
               {"processor", m.cpu_model},
               {"system", m.os},
               {"cpu", {{"brand_raw", m.cpu_model}}}};
  if (m.gpu) info["gpu"] = m.gpu->name;
  return info;
}

// What the candidate was asked for by may name a branch ("main", "feature/x"); an expression
// ("HEAD~2", "v1^", a commit id), HEAD or WORKTREE does not, and pytest-benchmark writes
// "(unknown)" where it finds no branch.
std::string branch_of(const SourceIdentity& s) {
  const std::string& name = s.requested;
  const bool expression = name.find_first_of("~^:@{ ") != std::string::npos;
  const bool hex = !name.empty() && name.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (name.empty() || expression || hex || name == "HEAD" || name == "WORKTREE") return "(unknown)";
  return name;
}

json commit_info(const Report& r) {
  const VariantProvenance* c = variant_named(r, "candidate");
  if (!c) return json::object();
  return {{"id", c->source.commit},
          {"dirty", c->source.kind == "worktree"},
          {"project", std::filesystem::path(r.provenance.repo).filename().string()},
          {"branch", branch_of(c->source)}};
}

}  // namespace

Export export_pytest_benchmark(const Report& r, const std::vector<ArmOutcome>& outcomes) {
  Export out;
  json benchmarks = json::array();
  const OutcomesByShape outcomes_of = by_shape(outcomes);
  for (const ShapeRow* p : compared_rows(r, out.notes)) {
    const ShapeRow& row = *p;
    for (const char* variant : {"baseline", "candidate"})
      benchmarks.push_back(benchmark(r, row, variant, outcomes_of));
  }
  const json doc = {{"machine_info", machine_info(r)},
                    {"commit_info", commit_info(r)},
                    {"benchmarks", benchmarks},
                    {"datetime", r.provenance.created_at},
                    {"version", "4.0.0"}};
  out.text = doc.dump(2) + "\n";
  return out;
}

}  // namespace abh
