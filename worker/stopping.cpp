#include "stopping.hpp"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

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

class StdRel final : public StoppingRule {
 public:
  explicit StdRel(const MeasureSettings& s) : s_(s) {}
  StopDecision check(const std::vector<double>& v, double measured_s) override {
    const int n = static_cast<int>(v.size());
    const double noise = robust_noise(v);
    if (n >= s_.min_samples && measured_s >= s_.min_time_s) {
      if (noise <= s_.max_noise)
        return {true, "noise " + pct(noise) + " <= " + pct(s_.max_noise) + " after " +
                          std::to_string(n) + " samples"};
      // Converged: compare with the noise recorded when there were half as many samples.
      for (auto it = history_.rbegin(); it != history_.rend(); ++it) {
        if (2 * it->first > n) continue;
        if (it->first >= s_.min_samples && std::fabs(noise - it->second) < 0.05 * it->second)
          return {true, "noise " + pct(noise) + " > " + pct(s_.max_noise) + " but converged (" +
                            pct(it->second) + " at " + std::to_string(it->first) + " samples, " +
                            std::to_string(n) + " now)"};
        break;
      }
    }
    if (history_.empty() || n >= 2 * history_.back().first) history_.emplace_back(n, noise);
    if (n >= s_.max_samples)
      return {true, "sample limit " + std::to_string(s_.max_samples) + " reached with noise " +
                        pct(noise) + " (target " + pct(s_.max_noise) + " not met)"};
    if (measured_s >= s_.max_time_s && n >= s_.min_samples)
      return {true, "time limit " + secs(s_.max_time_s) + " reached with noise " + pct(noise) +
                        " (target " + pct(s_.max_noise) + " not met)"};
    return {};
  }

 private:
  MeasureSettings s_;
  std::vector<std::pair<int, double>> history_;  // (sample count, noise) at each doubling
};

class Fixed final : public StoppingRule {
 public:
  explicit Fixed(int n) : n_(n) {}
  StopDecision check(const std::vector<double>& v, double) override {
    if (static_cast<int>(v.size()) >= n_) return {true, "fixed " + std::to_string(n_) + " samples"};
    return {};
  }

 private:
  int n_;
};

using Factory = std::function<std::unique_ptr<StoppingRule>(const MeasureSettings&)>;

// The stopping rules by name: a new rule is one entry here.
const std::map<std::string, Factory>& registry() {
  static const std::map<std::string, Factory> r = {
      {"stdrel", [](const MeasureSettings& s) { return std::make_unique<StdRel>(s); }},
      {"fixed", [](const MeasureSettings& s) { return std::make_unique<Fixed>(s.min_samples); }},
  };
  return r;
}

}  // namespace

std::vector<std::string> stopping_rule_names() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : registry()) out.push_back(name);
  return out;
}

std::unique_ptr<StoppingRule> make_stopping_rule(const MeasureSettings& s) {
  auto it = registry().find(s.stopping);
  if (it == registry().end())
    throw UsageError("stopping rule '" + s.stopping + "' is unknown: use one of " +
                     join(stopping_rule_names(), ", "));
  return it->second(s);
}

}  // namespace abh::worker
