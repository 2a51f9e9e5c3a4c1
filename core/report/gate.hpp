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
  // Verdict slower, or every candidate arm slower than every baseline arm by more than the band
  // (however large the drift).
  std::vector<GateShape> regressions;
  // Unstable or ambiguous and not separated from the baseline either way: the direction is not
  // known, so a regression is not ruled out.
  std::vector<GateShape> undecided;
  // A failed arm: no speedup at all.
  std::vector<GateShape> failed;
};

// Judges every shape of the report. Shapes that are same or faster, and unstable or ambiguous
// shapes whose every candidate arm is faster than every baseline arm by more than the band, pass.
GateResult judge_gate(const Report& r);

// Every candidate arm slower than every baseline arm by more than the band: the slowest baseline
// arm's median over the fastest candidate arm's is below 1 - band. Sample noise cannot explain
// that, and no drift of the baseline can either (it would have to slow the baseline down, not
// speed it up).
bool separated_slower(const ShapeRow& row, double band);
// The mirror image: the fastest baseline arm over the slowest candidate arm is above 1 + band.
bool separated_faster(const ShapeRow& row, double band);

}  // namespace abh
