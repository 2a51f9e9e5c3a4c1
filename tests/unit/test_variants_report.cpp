// The report of a variants file (report/variants_report.hpp): each candidate's comparison is the
// two-variant report over the baseline's arms and its own, at the Bonferroni-adjusted level; the
// JSON mapping is exact both ways; the formats show every candidate and the PR comment stays
// under GitHub's limit.
#include <doctest/doctest.h>

#include "report/variants_report.hpp"
#include "report_fixtures.hpp"
#include "test_support.hpp"

using namespace abh;
using abh::test::contains;

namespace {

// Baseline "a", candidates "fast" (10 % faster on every shape) and "twin" (the baseline's build),
// one ABA-like block of every variant per shape, two blocks.
Plan three_variant_plan(int shapes) {
  Plan p = test::make_plan(shapes);
  p.variants[0].name = "a";
  p.variants[1].name = "fast";
  Variant twin = p.variants[0];
  twin.name = "twin";
  twin.build = {{"OPT", "-O2"}};
  p.variants.push_back(twin);
  p.schedule.rounds = 2;
  p.tasks = make_schedule(p.shapes, p.schedule, {"a", "fast", "twin"});
  for (auto& t : p.tasks) t.cpus = {7};
  return p;
}

std::vector<ArmOutcome> outcomes_of(const Plan& p) {
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 0;
  for (const Task& t : p.tasks) {
    ArmOutcome o;
    o.task = t;
    o.result = test::make_result(p, t, t.variant == "fast" ? 9000 : 10000, ++seed);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

TEST_CASE("variants report: a candidate's plan is the baseline's arms and its own, by role") {
  const Plan p = three_variant_plan(2);
  CHECK(is_variants_plan(p));
  CHECK_FALSE(is_variants_plan(test::make_plan(2)));
  const Plan twin = candidate_plan(p, "twin");
  REQUIRE(twin.variants.size() == 2);
  CHECK(twin.variants[0].name == "baseline");
  CHECK(twin.variants[1].name == "candidate");
  CHECK(twin.variants[1].build.at("OPT") == "-O2");
  std::string arms;
  for (const Task& t : twin.tasks)
    if (t.shape == p.shapes[0].id) arms += t.arm + "/" + t.variant + " ";
  CHECK(arms ==
        "a.1/baseline twin.1/candidate a.2/baseline a.3/baseline twin.2/candidate "
        "a.4/baseline ");
  const auto outcomes = candidate_outcomes(p, outcomes_of(p), "twin");
  CHECK(outcomes.size() == twin.tasks.size());
  CHECK(outcomes[1].task == twin.tasks[1]);
}

TEST_CASE("variants report: each candidate judged at the Bonferroni level, mapped both ways") {
  const Plan p = three_variant_plan(3);
  const VariantsReport r = build_variants_report(p, outcomes_of(p), StatsOptions{}, "sha256:x");
  CHECK(bonferroni_confidence(0.95, 1) == 0.95);
  CHECK(r.comparison_confidence == doctest::Approx(0.975));
  REQUIRE(r.candidates.size() == 2);
  CHECK(r.baseline == "a");
  CHECK(r.variants[2].build.at("OPT") == "-O2");
  for (const auto& c : r.candidates) CHECK(c.report.stats.confidence == r.comparison_confidence);
  const Report& fast = r.candidates[0].report;
  const Report& twin = r.candidates[1].report;
  CHECK(r.candidates[0].name == "fast");
  for (const ShapeRow& row : fast.shapes) {
    CHECK(row.verdict == Verdict::faster);
    CHECK(*row.speedup == doctest::Approx(10000.0 / 9000).epsilon(0.01));
    CHECK(row.arms.size() == 6);
  }
  for (const ShapeRow& row : twin.shapes) CHECK(row.verdict == Verdict::same);
  // The baseline's drift is the same in every candidate's report: both hold its arms.
  CHECK(fast.shapes[0].drift == twin.shapes[0].drift);
  CHECK(variants_report_from_json(to_json(r), "r").candidates.size() == 2);
  CHECK(to_json(variants_report_from_json(to_json(r), "r")) == to_json(r));

  const std::string term = render_variants(r, "terminal", {});
  CHECK(contains(term, "Bonferroni over 2 candidate(s)"));
  CHECK(contains(term, "fast vs a: geomean 1.11"));
  CHECK(contains(term, "twin vs a: geomean"));
  const std::string md = render_variants_markdown(r, {});
  CHECK(contains(md, "| `" + p.shapes[2].id + "` |"));
  CHECK(contains(render_variants_csv(r, {}), p.shapes[1].id + ",kernel,a,twin,"));
  CHECK_THROWS_AS(render_variants(r, "svg", {}), UsageError);
}

TEST_CASE("variants report: the PR comment cuts matrix rows to stay under GitHub's limit") {
  const Plan p = three_variant_plan(3);
  VariantsReport r = build_variants_report(p, outcomes_of(p), StatsOptions{}, "sha256:x");
  // 3000 rows of each candidate: far more than a comment holds.
  for (auto& c : r.candidates) {
    const std::vector<ShapeRow> rows = c.report.shapes;
    for (int i = 0; i < 1000; ++i)
      for (const ShapeRow& row : rows) c.report.shapes.push_back(row);
  }
  const std::string pr = render_variants_pr(r, {});
  CHECK(pr.size() <= kPrCommentLimit);
  CHECK(pr.rfind(kPrMarker, 0) == 0);
  CHECK(contains(pr, "more shapes: report.md in the run directory has them all"));
  CHECK(contains(pr, "Result-set digest"));
}
