// Speed-of-light times against hand calculations. The GPU here is made up with round figures
// (1000 / 2000 / 4000 TFLOP/s, 5 TB/s) so every expected value can be checked on paper.
#include <doctest/doctest.h>

#include <filesystem>

#include "model/model_grid.hpp"
#include "stats/roofline.hpp"
#include "system/error.hpp"

using namespace abh;

namespace {

GpuSpec round_gpu() {
  GpuSpec g;
  g.name = "Test GPU";
  g.peak_tflops = {{"bf16", 1000}, {"fp8", 2000}, {"fp4", 4000}};
  g.memory_tbps = 5;
  g.precisions = {"bf16", "fp8", "fp8_block", "mxfp8", "nvfp4"};
  g.source = "test";
  return g;
}

RooflineOptions opts(double launch_us) {
  RooflineOptions o;
  for (const auto& p : known_precisions()) o.compute_fraction[p] = 0.8;
  o.memory_fraction = 0.9;
  o.launch_floor_s = launch_us * 1e-6;
  return o;
}

Shape shape(json params) {
  return Shape{"s", "", std::move(params), "kernel"};
}

const std::filesystem::path kTable = std::filesystem::path(ABH_SOURCE_DIR) / "data" / "gpus.json";

}  // namespace

TEST_CASE("roofline: compute-bound bf16 8192^3") {
  auto r = roofline(shape({{"m", 8192}, {"n", 8192}, {"k", 8192}, {"precision", "bf16"}}),
                    round_gpu(), opts(5));
  // FLOP = 2 * 8192^3 = 1,099,511,627,776; at 1000e12 * 0.8 = 800e12 FLOP/s -> 1.37439e-3 s
  CHECK(r.flops == 1099511627776.0);
  CHECK(r.compute_s == doctest::Approx(1.37438953472e-3).epsilon(1e-12));
  // bytes = 3 * 8192^2 * 2 = 402,653,184; at 5e12 * 0.9 = 4.5e12 B/s -> 8.9478e-5 s
  CHECK(r.bytes == 402653184.0);
  CHECK(r.memory_s == doctest::Approx(8.9478485333e-5).epsilon(1e-9));
  CHECK(r.bound == "compute");
  CHECK(r.sol_s == r.compute_s);
}

TEST_CASE("roofline: memory-bound bf16 skinny GEMM") {
  auto r = roofline(shape({{"m", 16}, {"n", 8192}, {"k", 8192}, {"precision", "bf16"}}),
                    round_gpu(), opts(5));
  // FLOP = 2 * 16 * 8192 * 8192 = 2,147,483,648 / 800e12 = 2.68435456e-6 s
  CHECK(r.compute_s == doctest::Approx(2.68435456e-6).epsilon(1e-12));
  // bytes = A 16*8192*2 (262,144) + B 8192*8192*2 (134,217,728) + D 16*8192*2 (262,144)
  //       = 134,742,016 / 4.5e12 = 2.99426702e-5 s
  CHECK(r.bytes == 134742016.0);
  CHECK(r.memory_s == doctest::Approx(2.994267022e-5).epsilon(1e-9));
  CHECK(r.bound == "memory");
  CHECK(r.sol_s == r.memory_s);
}

TEST_CASE("roofline: launch-bound tiny GEMM") {
  auto r = roofline(shape({{"m", 128}, {"n", 128}, {"k", 128}, {"precision", "bf16"}}), round_gpu(),
                    opts(5));
  // FLOP 4,194,304 / 800e12 = 5.24e-9 s; bytes 3 * 128^2 * 2 = 98,304 / 4.5e12 = 2.18e-8 s;
  // both far below the 5 us floor.
  CHECK(r.bytes == 98304.0);
  CHECK(r.bound == "launch");
  CHECK(r.sol_s == doctest::Approx(5e-6));
}

TEST_CASE("roofline: block-scaled formats count their scale-factor bytes") {
  // fp8_block fprop 64 x 4096 x 4096: A activation 1x128, B weight 128x128.
  json p = gemm_params(64, 4096, 4096, "fp8_block", GemmPass::fprop);
  auto r = roofline(shape(p), round_gpu(), opts(1));
  // A scales: 64 rows * 4096/128 = 32 blocks * 4 B = 8,192; B scales: 32 * 32 blocks * 4 B = 4,096
  CHECK(r.scale_bytes == 12288.0);
  // A 64*4096*1 = 262,144; B 4096*4096*1 = 16,777,216; D 64*4096*2 = 524,288; + 12,288
  //   = 17,575,936 bytes / 4.5e12 = 3.905763556e-6 s
  CHECK(r.bytes == 17575936.0);
  CHECK(r.memory_s == doctest::Approx(3.905763556e-6).epsilon(1e-9));
  // FLOP 2*64*4096*4096 = 2,147,483,648 at the fp8 peak 2000e12 * 0.8 -> 1.34217728e-6 s
  CHECK(r.compute_s == doctest::Approx(1.34217728e-6).epsilon(1e-12));
  CHECK(r.bound == "memory");

  // The same shape in wgrad roles (fp8_block_1x128): both operands 1x128, so B has
  // 4096 rows * 32 blocks * 4 B = 524,288 scale bytes.
  json w = gemm_params(64, 4096, 4096, "fp8_block", GemmPass::wgrad);
  CHECK(w["precision"] == "fp8_block_1x128");
  CHECK(roofline(shape(w), round_gpu(), opts(1)).scale_bytes == 8192.0 + 524288.0);
  // A shape that gives only the GEMM precision gets that precision's operands.
  CHECK(roofline(shape({{"m", 64}, {"n", 4096}, {"k", 4096}, {"precision", "fp8_block_1x128"}}),
                 round_gpu(), opts(1))
            .scale_bytes == 8192.0 + 524288.0);
  CHECK(roofline(shape({{"m", 64}, {"n", 4096}, {"k", 4096}, {"precision", "fp8_block_128x128"}}),
                 round_gpu(), opts(1))
            .scale_bytes == 12288.0);
  CHECK_THROWS_AS(roofline(shape({{"m", 64}, {"n", 64}, {"k", 64}, {"precision", "fp8_block"}}),
                           round_gpu(), opts(1)),
                  UsageError);

  // mxfp8: one E8M0 byte per 32 along K: A 64 * 128 = 8,192; B 4096 * 128 = 524,288.
  json mx = gemm_params(64, 4096, 4096, "mxfp8", GemmPass::fprop);
  CHECK(roofline(shape(mx), round_gpu(), opts(1)).scale_bytes == 532480.0);

  // nvfp4: 0.5 B/element + one E4M3 per 16 + a 4-byte per-tensor scale per operand.
  // A 64*4096/2 = 131,072; B 4096*4096/2 = 8,388,608; D 524,288;
  // scales A 64*256 + 4 = 16,388, B 4096*256 + 4 = 1,048,580 -> 10,108,936 bytes.
  json fp4 = gemm_params(64, 4096, 4096, "nvfp4", GemmPass::fprop);
  auto r4 = roofline(shape(fp4), round_gpu(), opts(1));
  CHECK(r4.scale_bytes == 1064968.0);
  CHECK(r4.bytes == 10108936.0);
  CHECK(r4.peak_tflops == 4000);

  // Tensor-scaled fp8: one fp32 per operand.
  json t = gemm_params(64, 4096, 4096, "fp8", GemmPass::dgrad);
  CHECK(roofline(shape(t), round_gpu(), opts(1)).scale_bytes == 8.0);
}

TEST_CASE("roofline: scale bytes round partial blocks up") {
  CHECK(scale_bytes("vec128_32f", 3, 129) == 3 * 2 * 4);
  CHECK(scale_bytes("blk128x128_32f", 129, 129) == 2 * 2 * 4);
  CHECK(scale_bytes("vec32_ue8m0", 1, 33) == 2);
  CHECK(scale_bytes("vec16_ue4m3", 1, 17) == 2 + 4);
  CHECK(scale_bytes("none", 100, 100) == 0);
  CHECK_THROWS_AS(scale_bytes("vec64", 1, 1), UsageError);
  CHECK(bytes_per_element("e2m1") == 0.5);
  CHECK_THROWS_AS(bytes_per_element("int8"), UsageError);
}

TEST_CASE("roofline: shipped GPU table and its H200-measured default fractions") {
  GpuTable t = load_gpu_table(kTable);
  for (const char* name :
       {"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA B200",
        "NVIDIA B300 SXM6 AC", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"})
    CHECK(find_gpu(t, name).name == name);
  const GpuSpec& h200 = find_gpu(t, "NVIDIA H200");
  CHECK(h200.peak_tflops.at("bf16") == 989.4);
  CHECK(h200.peak_tflops.at("fp8") == 1978.9);
  CHECK(h200.memory_tbps == 4.8);

  RooflineOptions o = default_roofline_options(t);
  // 790 TFLOP/s measured / 989.4 peak; 1400 / 1978.9; 4.3 TB/s / 4.8
  CHECK(o.compute_fraction.at("bf16") == doctest::Approx(790.0 / 989.4));
  CHECK(o.compute_fraction.at("fp8") == doctest::Approx(1400.0 / 1978.9));
  CHECK(o.compute_fraction.at("fp8_block") == o.compute_fraction.at("fp8"));
  CHECK(o.memory_fraction == doctest::Approx(4.3 / 4.8));
  CHECK(o.launch_floor_s == doctest::Approx(3.2e-6));  // measured, data/gpus.json

  // By construction the H200 bf16 8192^3 bound is the measured 1.39 ms: 1.0995e12 / 790e12.
  auto r = roofline(shape({{"m", 8192}, {"n", 8192}, {"k", 8192}, {"precision", "bf16"}}), h200, o);
  CHECK(r.sol_s == doctest::Approx(1099511627776.0 / 790e12));
  CHECK(r.bound == "compute");
}

TEST_CASE("roofline: unknown GPU and unsupported precision are errors that say what exists") {
  GpuTable t = load_gpu_table(kTable);
  try {
    find_gpu(t, "NVIDIA H300");
    FAIL("expected an error");
  } catch (const UsageError& e) {
    std::string msg = e.what();
    CHECK(msg.find("unknown GPU 'NVIDIA H300'") != std::string::npos);
    for (const auto& g : t.gpus) CHECK(msg.find("\"" + g.name + "\"") != std::string::npos);
  }
  const GpuSpec& h200 = find_gpu(t, "NVIDIA H200");
  json p = gemm_params(128, 128, 128, "nvfp4", GemmPass::fprop);
  CHECK_THROWS_WITH_AS(roofline(shape(p), h200, default_roofline_options(t)),
                       doctest::Contains("does not run nvfp4"), UsageError);
  CHECK_THROWS_WITH_AS(
      roofline(shape({{"m", 1}, {"n", 1}, {"k", 1}}), h200, default_roofline_options(t)),
      doctest::Contains("no 'precision'"), UsageError);
}

TEST_CASE("roofline: GPU table validation") {
  json j = read_json_file(kTable);
  json bad = j;
  bad["gpus"][0].erase("source");
  CHECK_THROWS_WITH(gpu_table_from_json(bad, "t"), doctest::Contains("field 'source'"));
  bad = j;
  bad["calibration"]["gpu"] = "NVIDIA H300";
  CHECK_THROWS_WITH(gpu_table_from_json(bad, "t"), doctest::Contains("not in the table"));
  bad = j;
  bad["calibration"]["unmeasured_precisions"].erase("nvfp4");
  CHECK_THROWS_WITH(gpu_table_from_json(bad, "t"), doctest::Contains("precision 'nvfp4'"));
  bad = j;
  bad["calibration"]["compute"]["bf16"]["measured_tflops"] = 2000;  // above the 989.4 peak
  CHECK_THROWS_WITH(gpu_table_from_json(bad, "t"), doctest::Contains("above the datasheet"));
}
