// The CI gate of `--fail-on-regression` (docs/exit-codes.md): which shapes are regressions, and
// which cannot be decided either way. It fails closed: a shape only passes when its measurements
// rule a regression beyond the noise band out.
#pragma once

#include <string>
#include <vector>

#include "report/report.hpp"

namespace abh {

struct GateShape {
  std::string shape;
  std::string reason;  // one line: the verdict and the numbers that decided it
};

struct GateResult {
  // Verdict slower on at least two candidate arms, or every candidate arm slower than every
  // baseline arm by more than the band and the baseline's own spread (however large the drift).
  std::vector<GateShape> regressions;
  // Unstable or ambiguous and not separated from the baseline either way: the direction is not
  // known, so a regression is not ruled out. Also slower on a single candidate arm (unconfirmed).
  std::vector<GateShape> undecided;
  // A failed arm: no speedup at all.
  std::vector<GateShape> failed;
};

// Judges every shape of the report. Shapes that are same or faster, and unstable or ambiguous
// shapes whose every candidate arm is faster than every baseline arm by more than the band, pass.
GateResult judge_gate(const Report& r);

// At least two candidate arms, every one slower than every baseline arm by more than the band and
// the spread of the
// baseline arms themselves: fastest candidate median > slowest baseline median x (1 + band) x
// (slowest / fastest baseline median). The baseline's own spread is how far whole arms of one
// variant differ on this machine now; a gap beyond it is not one more such difference. Without
// that margin, CPU A/A runs under two busy loops exited 5 in 5 of 10 runs (one B arm slower than
// both A arms by 1-4 %; docs/measurements.md). With a single candidate arm (ABA) nothing tells
// a regression from one slow arm, so the shape stays undecided (exit 6, not 0).
bool separated_slower(const ShapeRow& row, double band);
// The mirror image: slowest candidate median x (1 + band) x baseline spread < fastest baseline.
bool separated_faster(const ShapeRow& row, double band);

}  // namespace abh
