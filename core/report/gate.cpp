#include "report/gate.hpp"

#include <algorithm>

#include "report/report_notes.hpp"
#include "report/report_render.hpp"

namespace abh {
namespace {

struct ArmRange {
  double a_min = 0, a_max = 0, b_min = 0, b_max = 0;
  int b_arms = 0;
  bool valid = false;
};

// The smallest and largest median of each variant's arms (all must be valid).
ArmRange arm_range(const ShapeRow& row) {
  ArmRange r;
  bool have_a = false, have_b = false;
  for (const auto& a : row.arms) {
    if (!a.ok) return {};
    bool base = a.variant == "baseline";
    double& lo = base ? r.a_min : r.b_min;
    double& hi = base ? r.a_max : r.b_max;
    bool& have = base ? have_a : have_b;
    lo = have ? std::min(lo, a.median_ns) : a.median_ns;
    hi = have ? std::max(hi, a.median_ns) : a.median_ns;
    have = true;
    r.b_arms += base ? 0 : 1;
  }
  // One candidate arm cannot be told from one slow arm: CPU A/A runs under load had single B
  // arms 5-40 % slower than both A arms (docs/measurements.md). Two or more are needed.
  r.valid = have_a && r.b_arms >= 2;
  return r;
}

std::string interval_text(const ShapeRow& row) {
  return fmt::ratio(*row.speedup) + " " + fmt::interval(*row.ci);
}

std::string undecided_reason(const ShapeRow& row, double band) {
  if (row.verdict == Verdict::unstable)
    return "unstable: the baseline drifted " + fmt::drift(*row.drift) + ", beyond the band of " +
           fmt::percent(band, 1) + " (" + interval_text(row) + ")";
  return "ambiguous: " + interval_text(row) + " crosses an edge of the band [" +
         fmt::fixed(1 - band, 3) + ", " + fmt::fixed(1 + band, 3) + "]";
}

}  // namespace

bool separated_slower(const ShapeRow& row, double band) {
  ArmRange r = arm_range(row);
  return r.valid && r.b_min > r.a_max * (1 + band) * (r.a_max / r.a_min);
}

bool separated_faster(const ShapeRow& row, double band) {
  ArmRange r = arm_range(row);
  return r.valid && r.b_max * (1 + band) * (r.a_max / r.a_min) < r.a_min;
}

GateResult judge_gate(const Report& r) {
  const double band = r.stats.noise_band;
  GateResult g;
  for (const auto& row : r.shapes) {
    switch (row.verdict) {
      case Verdict::failed:
        g.failed.push_back({row.shape, "failed: " + row.failure});
        break;
      case Verdict::slower:
        if (unconfirmed_verdict(row, r.stats.decisive_factor)) {
          g.undecided.push_back(
              {row.shape, "slower on its only candidate arm: " + interval_text(row) +
                              ", unconfirmed (one arm cannot be told from one disturbed arm); "
                              "--until-decided 1 or more confirms it with another block"});
          break;
        }
        g.regressions.push_back(
            {row.shape, "slower: " + interval_text(row) +
                            " lies below 1 - band = " + fmt::fixed(1 - band, 3) +
                            (row.drift_ci ? ", and so does " + fmt::interval(*row.drift_ci) +
                                                ", widened by the drift " + fmt::drift(*row.drift)
                                          : std::string())});
        break;
      case Verdict::unstable:
      case Verdict::ambiguous:
        if (separated_slower(row, band)) {
          ArmRange a = arm_range(row);
          g.regressions.push_back(
              {row.shape, to_string(row.verdict) + ", but every candidate arm is slower than " +
                              "every baseline arm by more than the band and the baseline's own " +
                              "spread (baseline " + fmt::duration(a.a_min) + " .. " +
                              fmt::duration(a.a_max) + ", fastest candidate " +
                              fmt::duration(a.b_min) + ")"});
        } else if (!separated_faster(row, band)) {
          g.undecided.push_back({row.shape, undecided_reason(row, band)});
        }
        break;
      case Verdict::same:
      case Verdict::faster:
        break;
    }
  }
  return g;
}

}  // namespace abh
