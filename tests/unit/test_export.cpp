// abharness export (report/export.hpp): Bencher Metric Format carries the report's numbers and
// leaves failed shapes out by name; pytest-benchmark's statistics are its own (quartiles by its
// method, its outlier counts, its quirky hd15iqr) over the pooled raw samples, in seconds.
#include <doctest/doctest.h>

#include "report/export.hpp"
#include "report_fixtures.hpp"

namespace abh {
namespace {

struct Fixture {
  Plan plan = test::make_plan(4);
  std::vector<ArmOutcome> outcomes = test::make_outcomes(plan);
  Report report() const {
    return build_report(plan, outcomes, StatsOptions{}, "sha256:" + std::string(64, 'r'));
  }
  // Shape 0's candidate arm (ABA: its only one) gets exactly these samples.
  void set_candidate_samples(std::vector<double> ns) {
    for (ArmOutcome& o : outcomes)
      if (o.task.shape == plan.shapes[0].id && o.task.variant == "candidate")
        o.result->measurement.samples_ns = ns;
  }
  json pytest_stats() const {
    const json doc = json::parse(export_pytest_benchmark(report(), outcomes).text);
    for (const json& b : doc["benchmarks"])
      if (b["name"] == "candidate[" + plan.shapes[0].id + "]") return b["stats"];
    FAIL("no candidate benchmark for shape 0");
    return {};
  }
};

TEST_CASE("bmf: the report's speedup, interval and times per compared shape, failed ones named") {
  Fixture f;
  const Report r = f.report();
  const Export e = export_bmf(r, f.outcomes);
  const json doc = json::parse(e.text);
  CHECK(doc.size() == 3);
  REQUIRE(e.notes.size() == 1);
  CHECK(e.notes[0].find(f.plan.shapes[3].id + ": left out, failed") == 0);
  for (const ShapeRow& row : r.shapes) {
    if (!row.speedup) continue;
    const json& m = doc.at(row.shape);
    CHECK(m["speedup"]["value"] == *row.speedup);
    CHECK(m["speedup"]["lower_value"] == row.ci->lo);
    CHECK(m["speedup"]["upper_value"] == row.ci->hi);
    CHECK(m["latency"]["value"] == *row.candidate_ns);
    CHECK_FALSE(m["latency"].contains("lower_value"));  // one B arm: no spread to bound it by
    const double a1 = fmt::find_arm(row, "A1")->median_ns, a2 = fmt::find_arm(row, "A2")->median_ns;
    CHECK(m["baseline-latency"]["value"] == *row.baseline_ns);
    CHECK(m["baseline-latency"]["lower_value"] == std::min(a1, a2));
    CHECK(m["baseline-latency"]["upper_value"] == std::max(a1, a2));
  }
}

TEST_CASE("pytest-benchmark: statistics of an odd count, by pytest-benchmark's method 3") {
  Fixture f;
  f.set_candidate_samples({5, 1, 4, 2, 3});  // unsorted, as measured
  const json s = f.pytest_stats();
  CHECK(s["rounds"] == 5);
  CHECK(s["min"].get<double>() == doctest::Approx(1e-9));
  CHECK(s["max"].get<double>() == doctest::Approx(5e-9));
  CHECK(s["median"].get<double>() == doctest::Approx(3e-9));
  CHECK(s["q1"].get<double>() == doctest::Approx(1.75e-9));  // 0.25 * 1 + 0.75 * 2
  CHECK(s["q3"].get<double>() == doctest::Approx(4.25e-9));  // 0.75 * 4 + 0.25 * 5
  CHECK(s["iqr_outliers"] == 0);
  CHECK(s["ld15iqr"].get<double>() == doctest::Approx(1e-9));
  CHECK(s["hd15iqr"].get<double>() == doctest::Approx(5e-9));
  CHECK(s["total"].get<double>() == doctest::Approx(15e-9));
  CHECK(s["ops"].get<double>() == doctest::Approx(1 / 3e-9));
}

TEST_CASE("pytest-benchmark: an outlier is counted both ways, and hd15iqr is the datum past it") {
  Fixture f;
  f.set_candidate_samples({1, 2, 3, 4, 5, 6, 100});
  const json s = f.pytest_stats();
  CHECK(s["q1"].get<double>() == doctest::Approx(2.25e-9));  // 0.75 * 2 + 0.25 * 3
  CHECK(s["q3"].get<double>() == doctest::Approx(5.75e-9));  // 0.25 * 5 + 0.75 * 6
  CHECK(s["iqr_outliers"] == 1);
  CHECK(s["stddev_outliers"] == 1);
  CHECK(s["outliers"] == "1;1");
  // pytest-benchmark's hd15iqr is the first datum above Q3 + 1.5 IQR (11), not the last below it.
  CHECK(s["hd15iqr"].get<double>() == doctest::Approx(100e-9));
  CHECK(s["stddev"].get<double>() == doctest::Approx(36.5135e-9).epsilon(1e-5));
}

TEST_CASE("pytest-benchmark: an even count takes the median of each half") {
  Fixture f;
  f.set_candidate_samples({4, 1, 3, 2});
  const json s = f.pytest_stats();
  CHECK(s["q1"].get<double>() == doctest::Approx(1.5e-9));
  CHECK(s["q3"].get<double>() == doctest::Approx(3.5e-9));
  CHECK(s["median"].get<double>() == doctest::Approx(2.5e-9));
}

TEST_CASE("pytest-benchmark: one benchmark per variant of each compared shape, grouped by shape") {
  Fixture f;
  const Report r = f.report();
  const Export e = export_pytest_benchmark(r, f.outcomes);
  const json doc = json::parse(e.text);
  CHECK(doc["benchmarks"].size() == 6);
  CHECK(e.notes.size() == 1);
  CHECK(doc["commit_info"]["id"] == std::string(40, 'b'));
  CHECK(doc["commit_info"]["dirty"] == true);
  CHECK(doc["commit_info"]["branch"] == "(unknown)");  // WORKTREE names no branch
  CHECK(doc["machine_info"]["gpu"] == "NVIDIA H200");
  const json& b = doc["benchmarks"][0];
  CHECK(b["group"] == r.shapes[0].shape);
  CHECK(b["name"] == "baseline[" + r.shapes[0].shape + "]");
  CHECK(b["params"] == r.shapes[0].params);
  CHECK(b["extra_info"]["speedup"] == *r.shapes[0].speedup);
  CHECK(b["stats"]["rounds"] == 80);  // A1 and A2, 40 samples each
}

TEST_CASE(
    "export formats: a registry, and an unknown name is a usage error naming the known ones") {
  CHECK(export_formats() == std::vector<std::string>{"bmf", "pytest-benchmark"});
  CHECK_THROWS_WITH_AS(export_format("csv"),
                       "unknown export format 'csv'; known: bmf, pytest-benchmark", UsageError);
}

}  // namespace
}  // namespace abh

TEST_CASE(
    "pytest-benchmark: commit_info's branch is the candidate's revision only where it names one") {
  Fixture f;
  Report r = f.report();
  for (const auto& [requested, branch] :
       std::vector<std::pair<std::string, std::string>>{{"main", "main"},
                                                        {"feature/x", "feature/x"},
                                                        {"HEAD~2", "(unknown)"},
                                                        {"HEAD", "(unknown)"},
                                                        {"v1.2^", "(unknown)"},
                                                        {"79a9e53bf69f", "(unknown)"}}) {
    CAPTURE(requested);
    for (auto& v : r.provenance.variants)
      if (v.name == "candidate") v.source.requested = requested;
    const json doc = json::parse(export_pytest_benchmark(r, f.outcomes).text);
    CHECK(doc["commit_info"]["branch"] == branch);
  }
}
