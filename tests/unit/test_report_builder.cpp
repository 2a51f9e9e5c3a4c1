// The report builder on an in-memory plan and outcomes: per-shape speedups, verdicts and failed
// shapes, missing and unplanned arms, multi-arm schedules, and comparison at one SM clock.
#include <doctest/doctest.h>

#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

TEST_CASE("report: per-shape speedups, verdicts and failed shapes") {
  Report r = sample_report();
  REQUIRE(r.shapes.size() == 4);
  const ShapeRow &fast = r.shapes[0], &same = r.shapes[1], &slow = r.shapes[2],
                 &failed = r.shapes[3];
  CHECK(fast.verdict == Verdict::faster);
  CHECK(*fast.speedup == doctest::Approx(10000.0 / 9000).epsilon(0.005));
  CHECK(fast.ci->lo < *fast.speedup);
  CHECK(fast.ci->hi > *fast.speedup);
  CHECK(*fast.drift == doctest::Approx(1).epsilon(0.005));
  CHECK(fast.label == kAwkwardLabel);
  CHECK(same.verdict == Verdict::same);
  CHECK(same.throttled_arms == std::vector<std::string>{"B"});
  CHECK(slow.verdict == Verdict::slower);
  CHECK(failed.verdict == Verdict::failed);
  CHECK(!failed.speedup);
  CHECK(!failed.ci);
  CHECK(failed.failure.find("A2: exit code 3") != std::string::npos);

  // Per-arm figures.
  const ArmStats& a1 = fast.arms[0];
  CHECK(a1.arm == "A1");
  CHECK(a1.ok);
  CHECK(a1.samples == 40);
  CHECK(a1.median_ns == doctest::Approx(10000).epsilon(0.005));
  CHECK(a1.min_ns <= a1.median_ns);
  CHECK(a1.noise == doctest::Approx(0.002).epsilon(0.5));
  CHECK(a1.kernel_names.size() == 2);
  CHECK(a1.tactic == "tile=128x64,split=2");
  // 2 * 128 * 4096^2 flops in ~10 us = ~0.43 TFLOP/s.
  CHECK(*a1.tflops == doctest::Approx(2.0 * 128 * 4096 * 4096 / a1.median_ns / 1e3));
  CHECK(*a1.gbps > 0);
  CHECK(!failed.arms[2].ok);
  CHECK(failed.arms[2].arm == "A2");

  // Summary: the failed shape is out of every aggregate.
  const Summary& s = r.summary;
  CHECK(s.shapes_total == 4);
  CHECK(s.shapes_compared == 3);
  CHECK(s.shapes_failed == 1);
  CHECK(s.shapes_throttled == 1);
  CHECK(s.improved == 1);
  CHECK(s.regressed == 1);
  CHECK(s.verdicts.at("same") == 1);
  CHECK(s.verdicts.at("unstable") == 0);
  CHECK(*s.geomean ==
        doctest::Approx(std::cbrt(*fast.speedup * *same.speedup * *slow.speedup)).epsilon(1e-12));
  CHECK(*s.summed_time_ratio ==
        doctest::Approx((*fast.baseline_ns + *same.baseline_ns + *slow.baseline_ns) /
                        (*fast.candidate_ns + *same.candidate_ns + *slow.candidate_ns)));
  CHECK(s.min_speedup->shape == slow.shape);
  CHECK(s.max_speedup->shape == fast.shape);

  // Provenance comes from the plan and the caller.
  CHECK(r.provenance.result_set_digest == "sha256:" + std::string(64, 'r'));
  CHECK(r.provenance.variants.size() == 2);
  CHECK(r.provenance.variants[1].source.requested == kWorktree);
  CHECK(r.provenance.machine[0].gpu->uuid == "GPU-1234");
  CHECK(r.provenance.command.size() == 6);
}

TEST_CASE("report: missing, unplanned, duplicate and wrong-output arms") {
  Plan p = make_plan(2);
  auto outcomes = make_outcomes(p);

  auto missing = outcomes;
  missing.pop_back();  // the last shape's A2
  Report r = build_report(p, missing, {}, "d");
  CHECK(r.shapes[1].verdict == Verdict::failed);
  CHECK(r.shapes[1].failure.find("no outcome") != std::string::npos);
  CHECK(r.summary.shapes_compared == 1);

  auto wrong = outcomes;
  wrong[0].result->correctness.passed = false;
  r = build_report(p, wrong, {}, "d");
  CHECK(r.shapes[0].verdict == Verdict::failed);
  CHECK(r.shapes[0].failure.find("output verification failed") != std::string::npos);

  auto unplanned = outcomes;
  unplanned[0].task.arm = "A9";
  CHECK_THROWS_AS(build_report(p, unplanned, {}, "d"), Error);
  auto duplicate = outcomes;
  duplicate.push_back(outcomes[0]);
  CHECK_THROWS_AS(build_report(p, duplicate, {}, "d"), Error);

  // Nothing comparable: no aggregates, and every format still renders.
  std::vector<ArmOutcome> none;
  r = build_report(p, none, {}, "d");
  CHECK(r.summary.shapes_compared == 0);
  CHECK(!r.summary.geomean);
  CHECK(schema_errors(to_json(r)).empty());
  for (const auto& f : report_formats()) CHECK(!render(r, f, {}).empty());
  CHECK(report_from_json(to_json(r), "none").summary == r.summary);
}

TEST_CASE("report: ABBA averages both B arms, and one random block is refused") {
  Plan p = make_plan(1, "abba");
  auto outcomes = make_outcomes(p);
  Report r = build_report(p, outcomes, {}, "d");
  const ShapeRow& row = r.shapes[0];
  REQUIRE(row.arms.size() == 4);
  CHECK(row.arms[1].arm == "B1");
  CHECK(row.arms[2].arm == "B2");
  double a = (row.arms[0].median_ns + row.arms[3].median_ns) / 2;
  double b = (row.arms[1].median_ns + row.arms[2].median_ns) / 2;
  CHECK(*row.speedup == doctest::Approx(a / b).epsilon(1e-12));
  CHECK(*row.drift == doctest::Approx(row.arms[3].median_ns / row.arms[0].median_ns));

  // One random block is AB or BA: one arm per variant, so nothing measures how much whole arms
  // differ (docs/statistics.md#variation-between-arms).
  CHECK_THROWS_WITH_AS(make_plan(1, "random"), doctest::Contains("use --rounds 2 or more"),
                       UsageError);
  Plan q = make_plan(1, "aba");
  q.schedule.name = "random";
  q.schedule.rounds = 2;
  q.tasks = make_schedule(q.shapes, q.schedule);
  r = build_report(q, make_outcomes(q), {}, "d");
  CHECK(r.shapes[0].speedup);
  CHECK(r.shapes[0].drift);
  CHECK(r.shapes[0].verdict == Verdict::faster);
}

TEST_CASE("report: arms at different clocks are compared at one clock, unless asked not to") {
  Plan p = make_plan(1);
  // A2 ran 5 % below A1's clock: raw, the baseline "drifted" 5 % and the shape is unstable.
  const double mhz[3] = {1500, 1450, 1425};
  auto outcomes = clocked_outcomes(p, mhz);
  StatsOptions raw;
  raw.clock_normalize = false;
  Report r0 = build_report(p, outcomes, raw, "d");
  REQUIRE(r0.shapes[0].drift);
  CHECK(*r0.shapes[0].drift == doctest::Approx(1500.0 / 1425).epsilon(0.005));
  CHECK(r0.shapes[0].verdict == Verdict::unstable);
  CHECK(!r0.shapes[0].reference_mhz);

  Report r = build_report(p, outcomes, {}, "d");
  const ShapeRow& row = r.shapes[0];
  REQUIRE(row.reference_mhz);
  CHECK(*row.reference_mhz == doctest::Approx(1450).epsilon(0.02));
  CHECK(std::fabs(*row.drift - 1) < 0.002);
  CHECK(row.verdict == Verdict::same);
  CHECK(*row.speedup == doctest::Approx(1).epsilon(0.002));
  for (const ArmStats& a : row.arms) {
    CHECK(*a.clock_slope == doctest::Approx(-1).epsilon(0.03));
    CHECK(a.median_ns == doctest::Approx(1.5e9 / *row.reference_mhz).epsilon(0.002));
    CHECK(a.raw_median_ns != doctest::Approx(a.median_ns).epsilon(0.005));
  }
  // The candidate ran 3 % slower clocks than the baseline: recorded, so a reader can see it.
  REQUIRE(row.clock_gap);
  CHECK(*row.clock_gap == doctest::Approx(1450.0 / 1462.5 - 1).epsilon(0.2));
  auto rows = parse_csv(render(r, "csv", {}));
  REQUIRE(rows.size() == 2);
  auto col = [&](const std::string& name) { return csv_column(rows, name); };
  CHECK(std::stod(rows[1][col("reference_mhz")]) == *row.reference_mhz);
  CHECK(std::stod(rows[1][col("A2_raw_median_ns")]) == row.arms[2].raw_median_ns);
  CHECK(std::stod(rows[1][col("B_clock_slope")]) == *row.arms[1].clock_slope);
  CHECK(rows[0].back() == "A2_failure");
  check_round_trip(r);
  CHECK(schema_errors(to_json(r)).empty());
}

TEST_CASE("report: arms tied on a timer's ticks are compared between the ticks") {
  // One 1,712 ns kernel in every arm, read through a 32 ns tick at a random phase: each arm's
  // readings are 1,696 or 1,728 about half the time each, so plain medians land a whole tick
  // (1.9 %) apart from arm to arm at random; the mid-distribution medians do not.
  Plan p = make_plan(1);
  std::vector<ArmOutcome> outcomes;
  std::uint64_t seed = 40;
  for (const Task& t : p.tasks) {
    ArmOutcome o;
    o.task = t;
    o.result = make_result(p, t, 1712, ++seed, 3000);
    o.result->measurement.clock.timer_resolution_ns = 32;  // CUPTI's tick, as GPU results record
    Rng rng(seed);
    for (double& x : o.result->measurement.samples_ns) {
      const double start = 32 * rng.uniform();
      x = 32 * (std::floor((start + 1712) / 32) - std::floor(start / 32));
    }
    outcomes.push_back(std::move(o));
  }
  Report r = build_report(p, outcomes, {}, "d");
  CHECK(r.stats.spread_ties);
  for (const ArmStats& a : r.shapes[0].arms)
    CHECK(a.median_ns == doctest::Approx(1712).epsilon(0.002));
  CHECK(r.shapes[0].verdict == Verdict::same);
  StatsOptions plain;
  plain.spread_ties = false;
  Report r0 = build_report(p, outcomes, plain, "d");
  for (const ArmStats& a : r0.shapes[0].arms) CHECK((a.median_ns == 1696 || a.median_ns == 1728));
  // Without a known tick (a host timer's readings) the same samples keep their plain medians.
  for (ArmOutcome& o : outcomes) o.result->measurement.clock.timer_resolution_ns = 0;
  Report host = build_report(p, outcomes, {}, "d");
  for (const ArmStats& a : host.shapes[0].arms) CHECK((a.median_ns == 1696 || a.median_ns == 1728));
}

TEST_CASE("report: a shape with an unclocked arm is compared as measured, and says so") {
  Plan p = make_plan(1);
  Report r = build_report(p, outcomes_with_unclocked_b(p), {}, "d");
  CHECK(!r.shapes[0].reference_mhz);
  CHECK(r.shapes[0].arms[1].median_ns == r.shapes[0].arms[1].raw_median_ns);
  const std::string term = render(r, "terminal", {});
  CHECK(term.find("compared as measured, not at one clock: arm(s) B") != std::string::npos);
}

TEST_CASE(
    "report: a real speedup survives clock normalization, a memory-bound time is left alone") {
  Plan p = make_plan(1);
  const double mhz[3] = {1500, 1400, 1500};
  // The candidate needs 10 % fewer cycles but, drawing more power, ran at a 7 % lower clock.
  Report r = build_report(p, clocked_outcomes(p, mhz, 1.35e6), {}, "d");
  CHECK(*r.shapes[0].speedup == doctest::Approx(1.5 / 1.35).epsilon(0.003));
  CHECK(r.shapes[0].verdict == Verdict::faster);
  StatsOptions raw;
  raw.clock_normalize = false;
  Report r0 = build_report(p, clocked_outcomes(p, mhz, 1.35e6), raw, "d");
  CHECK(*r0.shapes[0].speedup == doctest::Approx(1.5 / 1.35 * 1400 / 1500).epsilon(0.005));

  Report m = build_report(p, clocked_outcomes(p, mhz, 1.5e6, false), {}, "d");
  for (const ArmStats& a : m.shapes[0].arms) {
    CHECK(std::fabs(*a.clock_slope) < 0.1);
    CHECK(a.median_ns == doctest::Approx(a.raw_median_ns).epsilon(0.002));
  }
  CHECK(*m.shapes[0].speedup == doctest::Approx(1).epsilon(0.002));
}

namespace {

// Every arm of shape i at the baseline's 10 us, or `candidate_ns[i]` for B arms.
std::vector<ArmOutcome> outcomes_at(const Plan& p, const std::vector<double>& candidate_ns) {
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 0;
  for (const Task& t : p.tasks) {
    std::size_t i = 0;
    while (p.shapes[i].id != t.shape) ++i;
    out.push_back(
        {t, make_result(p, t, t.variant == "baseline" ? 10000 : candidate_ns[i], ++seed), ""});
  }
  return out;
}

}  // namespace

TEST_CASE("report: the geomean's verdict rests on the decided shapes only") {
  Plan p = make_plan(3);
  StatsOptions opt;
  opt.noise_band = 0.005;
  // 2x faster, unchanged, and 0.5 % faster: on the band's edge, so undecided.
  Report r = build_report(p, outcomes_at(p, {5000, 10000, 9950}), opt, "d");
  REQUIRE(r.shapes.size() == 3);
  CHECK(r.shapes[0].verdict == Verdict::faster);
  CHECK(r.shapes[1].verdict == Verdict::same);
  CHECK(r.shapes[2].verdict == Verdict::ambiguous);
  const Summary& s = r.summary;
  CHECK(s.shapes_compared == 3);
  CHECK(s.decided_shapes == 2);
  CHECK(*s.decided_geomean ==
        doctest::Approx(std::sqrt(*r.shapes[0].speedup * *r.shapes[1].speedup)).epsilon(1e-12));
  CHECK(*s.geomean_verdict == Verdict::faster);
  CHECK(fmt::verdict_basis(s, opt).find("rests on the 2 decided shapes") != std::string::npos);

  // No shape decided: neither is the headline, whatever the geomean of the undecided ones.
  Plan one = make_plan(1);
  r = build_report(one, outcomes_at(one, {9950}), opt, "d");
  CHECK(r.summary.decided_shapes == 0);
  CHECK(!r.summary.decided_geomean);
  CHECK(r.summary.geomean);
  CHECK(*r.summary.geomean_verdict == Verdict::ambiguous);
  CHECK(fmt::verdict_basis(r.summary, opt).find("no shape is decided") != std::string::npos);

  // One shape decided faster by 1 %, two undecided across the band's lower edge (their
  // candidates about 0.4 % slower, give or take the samples' noise): the decided shape alone says
  // faster, the interval over all three does not, and the headline claims nothing.
  r = build_report(p, outcomes_at(p, {9900, 10055, 10032}), opt, "d");
  REQUIRE(r.shapes[0].verdict == Verdict::faster);
  CHECK(r.shapes[1].verdict == Verdict::ambiguous);
  CHECK(r.shapes[2].verdict == Verdict::ambiguous);
  CHECK(r.summary.decided_shapes == 1);
  CHECK(*r.summary.geomean_verdict == Verdict::ambiguous);
  CHECK(fmt::verdict_basis(r.summary, opt)
            .find("faster, which the interval over every shape "
                  "does not confirm") != std::string::npos);
}

TEST_CASE("report: an arm disturbed far beyond its variant's other arms is left out, and said") {
  // An A/A of four ABA blocks; one candidate arm ran 1.9x slow, as one did on a shared CI machine
  // when another process held its CPU (stats/arm_variation.hpp).
  Plan p = make_plan(1, "aba");
  p.schedule.rounds = 4;
  p.tasks = make_schedule(p.shapes, p.schedule);
  std::vector<ArmOutcome> outcomes;
  std::uint64_t seed = 0;
  int candidates = 0;
  for (const Task& t : p.tasks) {
    const bool disturbed = t.variant == "candidate" && ++candidates == 3;
    outcomes.push_back({t, make_result(p, t, disturbed ? 19000 : 10000, ++seed), ""});
  }
  StatsOptions opt;
  opt.noise_band = 0.05;
  Report r = build_report(p, outcomes, opt, "d");
  const ShapeRow& row = r.shapes[0];
  CHECK(row.verdict == Verdict::same);
  CHECK(*row.speedup == doctest::Approx(1).epsilon(0.005));
  int left_out = 0;
  for (const ArmStats& a : row.arms) {
    if (!a.outlier_ratio) continue;
    ++left_out;
    CHECK(a.variant == "candidate");
    CHECK(a.ok);
    CHECK(*a.outlier_ratio == doctest::Approx(1.9).epsilon(0.01));
  }
  CHECK(left_out == 1);
  bool noted = false;
  for (const ReportNote& n : r.notes)
    if (const auto* o = std::get_if<note::OutlierArms>(&n)) {
      noted = true;
      CHECK(o->arms == 1);
      CHECK(o->first.find(row.shape + "/") == 0);
    }
  CHECK(noted);
  const std::string text = render(r, "terminal", {});
  CHECK(text.find("(left out)") != std::string::npos);
  CHECK(text.find("left out of the estimate as disturbed") != std::string::npos);
  check_round_trip(r);

  // With the rule off the disturbed arm counts: its mean of medians moves by a fifth and the
  // interval, wide with the arm's own variance, decides nothing.
  opt.outlier_arm_sigmas = 0;
  Report off = build_report(p, outcomes, opt, "d");
  CHECK(off.shapes[0].verdict != Verdict::same);
  CHECK(*off.shapes[0].speedup < 0.85);
  for (const ArmStats& a : off.shapes[0].arms) CHECK_FALSE(a.outlier_ratio);
}
