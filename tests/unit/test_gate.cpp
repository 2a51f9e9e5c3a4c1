// The CI gate of --fail-on-regression (report/gate.hpp, docs/exit-codes.md): which shapes are
// regressions and which cannot be decided, on hand-made report rows.
#include <doctest/doctest.h>

#include "report/gate.hpp"
#include "report_fixtures.hpp"

using namespace abh;

namespace {

// An A1, B1, B2, A2 row (both B arms at `b`) with the given medians, verdict and interval.
ShapeRow row(const char* id, Verdict v, double a1, double b, double a2, Interval ci) {
  ShapeRow r;
  r.shape = id;
  r.verdict = v;
  r.arms = {test::ok_arm("A1", "baseline", a1), test::ok_arm("B1", "candidate", b),
            test::ok_arm("B2", "candidate", b), test::ok_arm("A2", "baseline", a2)};
  r.speedup = (a1 + a2) / 2 / b;
  r.ci = ci;
  r.drift = a2 / a1;
  return r;
}

Report report_of(std::vector<ShapeRow> rows) {
  Report r;
  r.stats.noise_band = 0.01;
  r.shapes = std::move(rows);
  return r;
}

}  // namespace

TEST_CASE("gate: slower is a regression, same and faster pass") {
  GateResult g = judge_gate(report_of({row("s", Verdict::slower, 100, 120, 100, {0.8, 0.86}),
                                       row("e", Verdict::same, 100, 100, 100, {0.995, 1.005}),
                                       row("f", Verdict::faster, 120, 100, 120, {1.15, 1.25})}));
  REQUIRE(g.regressions.size() == 1);
  CHECK(g.regressions[0].shape == "s");
  CHECK(g.regressions[0].reason.find("slower") == 0);
  CHECK(g.undecided.empty());
  CHECK(g.failed.empty());
}

TEST_CASE("gate: an unstable shape whose candidate is slower than every baseline arm regressed") {
  // The naive kernel under two busy loops: the baseline drifted 50 %, yet B is 2.5x the slower A.
  GateResult g = judge_gate(report_of({row("u", Verdict::unstable, 100, 400, 150, {0.2, 0.5})}));
  REQUIRE(g.regressions.size() == 1);
  CHECK(g.regressions[0].reason.find("every candidate arm is slower") != std::string::npos);
  CHECK(g.undecided.empty());
  // A single candidate arm (ABA) cannot be told from one slow arm: undecided, not passed.
  ShapeRow aba = row("u", Verdict::unstable, 100, 400, 150, {0.2, 0.5});
  aba.arms.erase(aba.arms.begin() + 2);
  g = judge_gate(report_of({aba}));
  CHECK(g.regressions.empty());
  CHECK(g.undecided.size() == 1);
  // Overlapping arms: B between A1 and A2 is undecided, not passed.
  g = judge_gate(report_of({row("u", Verdict::unstable, 100, 120, 150, {0.9, 1.2})}));
  REQUIRE(g.undecided.size() == 1);
  CHECK(g.undecided[0].reason.find("unstable") == 0);
  CHECK(g.regressions.empty());
  // Slower than both baseline arms, but by less than they differ from each other: undecided.
  g = judge_gate(report_of({row("u", Verdict::unstable, 100, 200, 150, {0.6, 0.9})}));
  CHECK(g.regressions.empty());
  CHECK(g.undecided.size() == 1);
}

TEST_CASE("gate: undecided shapes pass only when separated faster, failed shapes are listed") {
  GateResult g = judge_gate(report_of({row("a", Verdict::ambiguous, 100, 100.5, 100, {0.98, 1.01}),
                                       row("up", Verdict::unstable, 200, 100, 150, {1.4, 1.9})}));
  REQUIRE(g.undecided.size() == 1);
  CHECK(g.undecided[0].shape == "a");
  CHECK(g.undecided[0].reason.find("ambiguous") == 0);
  ShapeRow f;
  f.shape = "x";
  f.verdict = Verdict::failed;
  f.failure = "A2: exit code 3";
  g = judge_gate(report_of({f}));
  REQUIRE(g.failed.size() == 1);
  CHECK(g.failed[0].reason == "failed: A2: exit code 3");
  CHECK(g.regressions.empty());
}

TEST_CASE("gate: separation compares the extreme arms against the band and the baseline spread") {
  // The baseline spread is 1 %: B must exceed 101 x 1.01 x 1.01 = 103.03 at a 1 % band.
  ShapeRow r = row("s", Verdict::unstable, 100, 104, 101, {0.9, 1.0});
  CHECK(separated_slower(r, 0.01));
  CHECK(!separated_slower(r, 0.02));  // 101 x 1.02 x 1.01 = 104.05: not beyond a 2 % band
  CHECK(!separated_slower(row("s", Verdict::unstable, 100, 103, 101, {0.9, 1.0}), 0.01));
  CHECK(!separated_faster(r, 0.01));
  r.arms[2].ok = false;  // a failed arm: nothing is separated
  CHECK(!separated_slower(r, 0.01));
}

TEST_CASE("gate: slower on a single candidate arm is undecided until a second arm confirms it") {
  // One block of A1, B, A2: one B arm cannot be told from one disturbed arm (an A/A run on a
  // loaded 2-core machine read slower 0.836 [0.797, 0.886] with a drift of -0.3 %).
  ShapeRow aba = row("s", Verdict::slower, 100, 120, 100, {0.80, 0.89});
  aba.arms.erase(aba.arms.begin() + 2);
  GateResult g = judge_gate(report_of({aba}));
  CHECK(g.regressions.empty());
  REQUIRE(g.undecided.size() == 1);
  CHECK(g.undecided[0].reason.find("unconfirmed") != std::string::npos);
  CHECK(g.undecided[0].reason.find("--until-decided") != std::string::npos);
  // A one-arm faster verdict passes: it cannot be a regression either way.
  ShapeRow fast = row("f", Verdict::faster, 120, 100, 120, {1.15, 1.25});
  fast.arms.erase(fast.arms.begin() + 2);
  g = judge_gate(report_of({fast}));
  CHECK(g.regressions.empty());
  CHECK(g.undecided.empty());
  // Timed on the GPU and wholly below 1/1.5: a regression on its one arm (decisive factor).
  ShapeRow gpu = row("g", Verdict::slower, 100, 250, 100, {0.38, 0.42});
  gpu.arms.erase(gpu.arms.begin() + 2);
  for (auto& a : gpu.arms) a.timer = "cupti";
  Report rep = report_of({gpu});
  rep.stats.decisive_factor = 1.5;
  g = judge_gate(rep);
  CHECK(g.regressions.size() == 1);
  CHECK(g.undecided.empty());
  rep.stats.decisive_factor = 0;
  CHECK(judge_gate(rep).undecided.size() == 1);
  // A slower verdict judged on the drift-widened interval says so.
  ShapeRow drifted = row("d", Verdict::slower, 100, 250, 103, {0.40, 0.42});
  drifted.drift_ci = Interval{0.39, 0.43};
  g = judge_gate(report_of({drifted}));
  REQUIRE(g.regressions.size() == 1);
  CHECK(g.regressions[0].reason.find("widened by the drift") != std::string::npos);
}
