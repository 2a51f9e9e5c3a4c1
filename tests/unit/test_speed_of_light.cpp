// Speed of light in a report: each arm's fraction of the shape's roofline time on a GPU in the
// table, and one note per reason a shape has none.
#include <doctest/doctest.h>

#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

TEST_CASE("report: speed-of-light fraction per arm on a GPU in the table") {
  GpuTable table = test_gpu_table();
  Plan p = make_plan(3);  // m = 128, 256, 512; n = k = 4096
  {
    // Without a precision there is no speed-of-light (an fp32 kernel must not get bf16's).
    Report none = build_report(p, make_outcomes(p), {}, "d", RooflineContext{&table, ""});
    CHECK(none.sol.shapes == 0);
    REQUIRE(none.sol.notes.size() == 1);
    CHECK(none.sol.notes[0].find("no precision") != std::string::npos);
  }
  for (auto& s : p.shapes) s.params["precision"] = "bf16";
  Report r = build_report(p, make_outcomes(p), {}, "d", RooflineContext{&table, ""});
  CHECK(r.sol.table == "test-gpus.json");
  CHECK(r.sol.gpus == std::vector<std::string>{"NVIDIA H200"});
  CHECK(r.sol.shapes == 3);
  CHECK(r.sol.notes.empty());

  // m = 512: 2 * 512 * 4096^2 = 17,179,869,184 FLOP at 1000 x 0.8 TFLOP/s = 21,474.83648 ns;
  // bytes (512*4096 + 4096*4096 + 512*4096) * 2 = 41,943,040 at 3.6 TB/s = 11,650.8 ns.
  const ShapeRow& big = r.shapes[2];
  REQUIRE(big.sol_ns);
  CHECK(*big.sol_ns == doctest::Approx(21474.83648).epsilon(1e-12));
  CHECK(big.sol_bound == "compute");
  for (const auto& a : big.arms) {
    REQUIRE(a.sol_fraction);
    CHECK(*a.sol_fraction == doctest::Approx(21474.83648 / a.median_ns).epsilon(1e-12));
  }
  CHECK(*big.baseline_sol_fraction == doctest::Approx(21474.83648 / *big.baseline_ns));
  CHECK(*big.candidate_sol_fraction == doctest::Approx(21474.83648 / *big.candidate_ns));
  // m = 128 is memory-bound: (2 * 128*4096 + 4096^2) * 2 = 35,651,584 B at 3.6 TB/s.
  CHECK(r.shapes[0].sol_bound == "memory");
  CHECK(*r.shapes[0].sol_ns == doctest::Approx(35651584 / 3.6e3).epsilon(1e-12));
  // A layer summary needs model-grid labels; these shapes have none.
  CHECK(!r.layer);

  std::string term = render(r, "terminal", {});
  CHECK(term.find("SOL") != std::string::npos);
  CHECK(term.find(fmt::sol_pair(big)) != std::string::npos);
  CHECK(term.find("test-gpus.json") != std::string::npos);
  std::string md = render(r, "markdown", {});
  CHECK(md.find("| SOL |") != std::string::npos);
  auto rows = parse_csv(render(r, "csv", {}));
  REQUIRE(rows.size() == 4);
  auto col = [&](const std::string& name) { return csv_column(rows, name); };
  CHECK(std::stod(rows[3][col("sol_ns")]) == *big.sol_ns);
  CHECK(rows[3][col("sol_bound")] == "compute");
  CHECK(std::stod(rows[3][col("A1_sol_fraction")]) == *big.arms[0].sol_fraction);
  check_round_trip(r);
}

TEST_CASE("report: no speed-of-light without a GPU spec, and the reason is recorded once") {
  GpuTable table = test_gpu_table();
  Plan cpu = make_plan(2);
  cpu.machine[0].gpu.reset();
  Report r = build_report(cpu, make_outcomes(cpu), {}, "d", RooflineContext{&table, ""});
  CHECK(r.sol.shapes == 0);
  CHECK(r.sol.notes == std::vector<std::string>{"CPU run, no GPU spec (2 shapes)"});
  for (const auto& row : r.shapes) {
    CHECK(!row.sol_ns);
    CHECK(row.sol_bound.empty());
    for (const auto& a : row.arms) CHECK(!a.sol_fraction);
  }
  std::string term = render(r, "terminal", {});
  CHECK(term.find("SOL") == std::string::npos);
  CHECK(term.find("speed-of-light not available: CPU run, no GPU spec") != std::string::npos);
  CHECK(render(r, "markdown", {}).find("| SOL |") == std::string::npos);
  check_round_trip(r);

  Plan other = make_plan(1);
  other.machine[0].gpu->name = "NVIDIA X1";
  r = build_report(other, make_outcomes(other), {}, "d", RooflineContext{&table, ""});
  REQUIRE(r.sol.notes.size() == 1);
  CHECK(r.sol.notes[0].find("GPU 'NVIDIA X1' not in test-gpus.json") == 0);

  // No table: the loader's error is the reason; a GPU plan without one given says so too.
  r = build_report(other, make_outcomes(other), {}, "d", RooflineContext{nullptr, "no gpus.json"});
  CHECK(r.sol.notes == std::vector<std::string>{"GPU table not loaded: no gpus.json (1 shape)"});
  r = build_report(other, make_outcomes(other), {}, "d");
  CHECK(r.sol.notes[0].find("no GPU table") == 0);

  // A precision the GPU does not run, and a shape without m, n, k.
  Plan odd = make_plan(2);
  odd.shapes[0].params["precision"] = "nvfp4";
  odd.shapes[1].params = {{"m", 128}, {"size", 4096}};  // no n, k
  r = build_report(odd, make_outcomes(odd), {}, "d", RooflineContext{&table, ""});
  CHECK(r.sol.shapes == 0);
  REQUIRE(r.sol.notes.size() == 2);
  CHECK(r.sol.notes[0] == "NVIDIA H200 does not run nvfp4 natively (1 shape)");
  CHECK(r.sol.notes[1].find("no positive integer m, n, k") != std::string::npos);
}
