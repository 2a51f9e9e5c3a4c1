// Per-layer sums of a model grid: each precision's GEMMs summed and compared to bf16's, with the
// failed GEMMs named and the sums marked partial.
#include <doctest/doctest.h>

#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

TEST_CASE("report: per-layer summary of a model grid sums each precision and compares to bf16") {
  ModelConfig c;
  c.name = "tiny";
  c.source = "test";
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 64;
  c.gated_mlp = true;
  Plan p = make_plan(0);
  for (const char* recipe : {"bf16", "fp8"})
    for (auto& s : model_gemms(c, recipe, 128, 1)) p.shapes.push_back(s);
  p.shapes.push_back(explicit_gemm(64, 64, 64, ""));  // not a model GEMM: in no sum
  p.tasks = make_schedule(p.shapes, p.schedule);
  REQUIRE(p.shapes.size() == 25);

  // bf16 GEMMs: baseline 10 us, candidate 8 us; fp8: 6 us and 5 us.
  auto times = [](const Shape& s, const Task& t) {
    bool fp8 = s.params.value("precision", "") == "fp8";
    if (t.variant == "baseline") return fp8 ? 6000.0 : 10000.0;
    return fp8 ? 5000.0 : 8000.0;
  };
  GpuTable table = test_gpu_table();
  Report r = build_report(p, constant_outcomes(p, times), {}, "d", RooflineContext{&table, ""});
  REQUIRE(r.layer);
  CHECK(r.layer->other_shapes == 1);
  REQUIRE(r.layer->precisions.size() == 2);
  const PrecisionSum &bf16 = r.layer->precisions[0], &fp8 = r.layer->precisions[1];
  CHECK(bf16.precision == "bf16");
  CHECK(bf16.gemms == 12);
  CHECK(bf16.missing.empty());
  CHECK(*bf16.baseline_ns == doctest::Approx(120000).epsilon(1e-12));
  CHECK(*bf16.candidate_ns == doctest::Approx(96000).epsilon(1e-12));
  CHECK(*bf16.baseline_vs_bf16 == 1);
  CHECK(fp8.precision == "fp8");
  CHECK(fp8.gemms == 12);
  CHECK(*fp8.baseline_ns == doctest::Approx(72000).epsilon(1e-12));
  CHECK(*fp8.baseline_vs_bf16 == doctest::Approx(0.6).epsilon(1e-12));
  CHECK(*fp8.candidate_vs_bf16 == doctest::Approx(60000.0 / 96000).epsilon(1e-12));
  // Every GEMM runs on the H200 of the table, so the layer has a summed speed of light.
  double sol = 0;
  for (std::size_t i = 12; i < 24; ++i) sol += *r.shapes[i].sol_ns;
  CHECK(*fp8.sol_ns == doctest::Approx(sol).epsilon(1e-12));
  std::string md = render(r, "markdown", {});
  auto shape_table = md.find("| shape |"), layer = md.find("**Per-layer summary**");
  REQUIRE(layer != std::string::npos);
  CHECK(shape_table < layer);
  CHECK(md.find("| fp8 | 12 | 72.00 \u00b5s | 60.00 \u00b5s | 0.6000x | 0.6250x |") !=
        std::string::npos);
  CHECK(render(r, "terminal", {}).find("per-layer GEMMs") != std::string::npos);
  check_round_trip(r);

  // One fp8 GEMM failed: its sums are partial, it is listed, and no ratio compares them to bf16.
  auto with_failure = [](const Shape& s, const Task& t) {
    bool fp8 = s.params.value("precision", "") == "fp8";
    if (fp8 && s.label == "fc2 wgrad" && t.arm == "B") return 0.0;
    if (t.variant == "baseline") return fp8 ? 6000.0 : 10000.0;
    return fp8 ? 5000.0 : 8000.0;
  };
  r = build_report(p, constant_outcomes(p, with_failure), {}, "d");
  const PrecisionSum& partial = r.layer->precisions[1];
  CHECK(partial.gemms == 12);
  REQUIRE(partial.missing.size() == 1);
  CHECK(partial.missing[0].rfind("fc2_wgrad_", 0) == 0);
  CHECK(*partial.baseline_ns == doctest::Approx(66000).epsilon(1e-12));
  CHECK(*partial.candidate_ns == doctest::Approx(55000).epsilon(1e-12));
  CHECK(!partial.baseline_vs_bf16);
  CHECK(!partial.candidate_vs_bf16);
  CHECK(!partial.sol_ns);  // no table given
  CHECK(*r.layer->precisions[0].baseline_vs_bf16 == 1);
  md = render(r, "markdown", {});
  CHECK(md.find("fp8 sums are partial; missing (failed): `" + partial.missing[0] + "`") !=
        std::string::npos);
  CHECK(md.find("66.00 \u00b5s (partial)") != std::string::npos);
  check_round_trip(r);
}
