// The 12 per-layer GEMMs against shapes worked out by hand (docs/grids.md has the derivation).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "model/grid.hpp"
#include "model/model_grid.hpp"
#include "system/error.hpp"

using namespace abh;

namespace {

// Llama-3.1-8B (meta-llama/Llama-3.1-8B config.json), typed in here rather than read from the
// preset so the test does not depend on the data file it also checks.
ModelConfig llama8b() {
  ModelConfig c;
  c.name = "Llama-3.1-8B";
  c.source = "test";
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 8;
  c.head_dim = 128;
  c.gated_mlp = true;
  c.num_hidden_layers = 32;
  return c;
}

struct Expected {
  const char* id;
  long long m, n, k;
  const char* layout;
};

void check_shapes(const std::vector<Shape>& got, const std::vector<Expected>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].id == want[i].id);
    CHECK(got[i].params["m"].get<long long>() == want[i].m);
    CHECK(got[i].params["n"].get<long long>() == want[i].n);
    CHECK(got[i].params["k"].get<long long>() == want[i].k);
    CHECK(got[i].params["layout"] == want[i].layout);
  }
}

const std::filesystem::path kModels = std::filesystem::path(ABH_SOURCE_DIR) / "data" / "models";

}  // namespace

TEST_CASE("model_grid: Llama-3.1-8B bf16 tp=1 micro-batch 2 x seq 4096") {
  // tokens T = 2 * 4096 = 8192
  // qkv:  in 4096, out (32 + 2*8) * 128 = 6144
  // proj: in 32 * 128 = 4096, out 4096
  // fc1:  in 4096, out 2 * 14336 = 28672 (gate and up fused)
  // fc2:  in 14336, out 4096
  // fprop M=T N=out K=in; dgrad M=T N=in K=out; wgrad M=out N=in K=T
  auto shapes = model_gemms(llama8b(), "bf16", 2 * 4096, 1);
  check_shapes(shapes, {
                           {"qkv_fprop_m8192_n6144_k4096_bf16", 8192, 6144, 4096, "TN"},
                           {"qkv_dgrad_m8192_n4096_k6144_bf16", 8192, 4096, 6144, "NN"},
                           {"qkv_wgrad_m6144_n4096_k8192_bf16", 6144, 4096, 8192, "NT"},
                           {"proj_fprop_m8192_n4096_k4096_bf16", 8192, 4096, 4096, "TN"},
                           {"proj_dgrad_m8192_n4096_k4096_bf16", 8192, 4096, 4096, "NN"},
                           {"proj_wgrad_m4096_n4096_k8192_bf16", 4096, 4096, 8192, "NT"},
                           {"fc1_fprop_m8192_n28672_k4096_bf16", 8192, 28672, 4096, "TN"},
                           {"fc1_dgrad_m8192_n4096_k28672_bf16", 8192, 4096, 28672, "NN"},
                           {"fc1_wgrad_m28672_n4096_k8192_bf16", 28672, 4096, 8192, "NT"},
                           {"fc2_fprop_m8192_n4096_k14336_bf16", 8192, 4096, 14336, "TN"},
                           {"fc2_dgrad_m8192_n14336_k4096_bf16", 8192, 14336, 4096, "NN"},
                           {"fc2_wgrad_m4096_n14336_k8192_bf16", 4096, 14336, 8192, "NT"},
                       });
  CHECK(shapes[0].label == "qkv fprop");
  CHECK(shapes[11].label == "fc2 wgrad");
  for (const auto& s : shapes) {
    CHECK(s.params["precision"] == "bf16");
    CHECK(s.params["a_type"] == "bf16");
    CHECK(s.params["b_type"] == "bf16");
    CHECK(s.params["d_type"] == "bf16");
    CHECK(s.params["a_scale"] == "none");
    CHECK(s.params["b_scale"] == "none");
  }
  // What `run` reads back is what was generated: unique, safe ids.
  Grid g;
  g.shapes = shapes;
  CHECK(grid_from_json(to_json(g), "test").shapes == shapes);
}

TEST_CASE("model_grid: Llama-3.1-8B bf16 tp=2 and tp=4") {
  // tp=2: per rank 16 query heads, 4 KV heads, 7168 of the MLP.
  // qkv out (16 + 2*4) * 128 = 3072; proj in 16 * 128 = 2048; fc1 out 2 * 7168 = 14336;
  // fc2 in 7168. Tokens stay 8192: every rank sees the whole (gathered) sequence.
  check_shapes(model_gemms(llama8b(), "bf16", 8192, 2),
               {
                   {"qkv_fprop_m8192_n3072_k4096_bf16", 8192, 3072, 4096, "TN"},
                   {"qkv_dgrad_m8192_n4096_k3072_bf16", 8192, 4096, 3072, "NN"},
                   {"qkv_wgrad_m3072_n4096_k8192_bf16", 3072, 4096, 8192, "NT"},
                   {"proj_fprop_m8192_n4096_k2048_bf16", 8192, 4096, 2048, "TN"},
                   {"proj_dgrad_m8192_n2048_k4096_bf16", 8192, 2048, 4096, "NN"},
                   {"proj_wgrad_m4096_n2048_k8192_bf16", 4096, 2048, 8192, "NT"},
                   {"fc1_fprop_m8192_n14336_k4096_bf16", 8192, 14336, 4096, "TN"},
                   {"fc1_dgrad_m8192_n4096_k14336_bf16", 8192, 4096, 14336, "NN"},
                   {"fc1_wgrad_m14336_n4096_k8192_bf16", 14336, 4096, 8192, "NT"},
                   {"fc2_fprop_m8192_n4096_k7168_bf16", 8192, 4096, 7168, "TN"},
                   {"fc2_dgrad_m8192_n7168_k4096_bf16", 8192, 7168, 4096, "NN"},
                   {"fc2_wgrad_m4096_n7168_k8192_bf16", 4096, 7168, 8192, "NT"},
               });
  // tp=4, micro-batch 1 x seq 2048: 8 query heads, 2 KV heads, 3584 of the MLP per rank.
  // qkv out (8 + 2*2) * 128 = 1536; proj in 8 * 128 = 1024; fc1 out 2 * 3584 = 7168; fc2 in 3584.
  check_shapes(model_gemms(llama8b(), "bf16", 2048, 4),
               {
                   {"qkv_fprop_m2048_n1536_k4096_bf16", 2048, 1536, 4096, "TN"},
                   {"qkv_dgrad_m2048_n4096_k1536_bf16", 2048, 4096, 1536, "NN"},
                   {"qkv_wgrad_m1536_n4096_k2048_bf16", 1536, 4096, 2048, "NT"},
                   {"proj_fprop_m2048_n4096_k1024_bf16", 2048, 4096, 1024, "TN"},
                   {"proj_dgrad_m2048_n1024_k4096_bf16", 2048, 1024, 4096, "NN"},
                   {"proj_wgrad_m4096_n1024_k2048_bf16", 4096, 1024, 2048, "NT"},
                   {"fc1_fprop_m2048_n7168_k4096_bf16", 2048, 7168, 4096, "TN"},
                   {"fc1_dgrad_m2048_n4096_k7168_bf16", 2048, 4096, 7168, "NN"},
                   {"fc1_wgrad_m7168_n4096_k2048_bf16", 7168, 4096, 2048, "NT"},
                   {"fc2_fprop_m2048_n4096_k3584_bf16", 2048, 4096, 3584, "TN"},
                   {"fc2_dgrad_m2048_n3584_k4096_bf16", 2048, 3584, 4096, "NN"},
                   {"fc2_wgrad_m4096_n3584_k2048_bf16", 4096, 3584, 2048, "NT"},
               });
}

TEST_CASE("model_grid: tp must divide heads and KV heads and the MLP") {
  // 8 KV heads cannot be split over 16 ranks.
  CHECK_THROWS_WITH_AS(model_gemms(llama8b(), "bf16", 8192, 16),
                       doctest::Contains("does not divide num_key_value_heads 8"), UsageError);
  ModelConfig c = llama8b();
  c.intermediate_size = 14335;  // odd: not divisible by 2
  CHECK_THROWS_WITH_AS(model_gemms(c, "bf16", 8192, 2),
                       doctest::Contains("intermediate_size 14335"), UsageError);
  CHECK_THROWS_AS(model_gemms(llama8b(), "bf16", 0, 1), UsageError);
  CHECK_THROWS_WITH_AS(model_gemms(llama8b(), "fp16", 8192, 1),
                       doctest::Contains("unknown precision 'fp16'"), UsageError);
}

TEST_CASE("model_grid: fp8 uses E4M3 forward and E5M2 for the incoming gradient") {
  auto s = model_gemms(llama8b(), "fp8", 8192, 1);
  REQUIRE(s.size() == 12);
  for (int op = 0; op < 4; ++op) {
    const auto& fprop = s[op * 3].params;
    const auto& dgrad = s[op * 3 + 1].params;
    const auto& wgrad = s[op * 3 + 2].params;
    CHECK(fprop["a_type"] == "e4m3");  // activation
    CHECK(fprop["b_type"] == "e4m3");  // weight
    CHECK(dgrad["a_type"] == "e5m2");  // dY
    CHECK(dgrad["b_type"] == "e4m3");  // weight
    CHECK(wgrad["a_type"] == "e5m2");  // dY^T
    CHECK(wgrad["b_type"] == "e4m3");  // activation
    for (const auto* p : {&fprop, &dgrad, &wgrad}) {
      CHECK((*p)["layout"] == "TN");  // Hopper FP8 reads both operands K-major
      CHECK((*p)["a_scale"] == "scalar_32f");
      CHECK((*p)["b_scale"] == "scalar_32f");
      CHECK((*p)["d_type"] == "bf16");
    }
  }
  // Same M, N, K as bf16; only the id suffix differs.
  CHECK(s[0].id == "qkv_fprop_m8192_n6144_k4096_fp8");
  CHECK(s[8].id == "fc1_wgrad_m28672_n4096_k8192_fp8");
}

TEST_CASE("model_grid: block-scaled precisions name their scale layouts per operand") {
  auto blk = model_gemms(llama8b(), "fp8_block", 8192, 1);
  // fprop: activation 1x128, weight 128x128; dgrad: gradient 1x128, weight 128x128;
  // wgrad: gradient and activation both 1x128 (along the token dimension, which is K).
  CHECK(blk[0].params["a_scale"] == "vec128_32f");
  CHECK(blk[0].params["b_scale"] == "blk128x128_32f");
  CHECK(blk[1].params["a_scale"] == "vec128_32f");
  CHECK(blk[1].params["b_scale"] == "blk128x128_32f");
  CHECK(blk[2].params["a_scale"] == "vec128_32f");
  CHECK(blk[2].params["b_scale"] == "vec128_32f");
  CHECK(blk[1].params["a_type"] == "e4m3");  // E4M3 for gradients too in this recipe
  // The params carry the cuBLASLt plugin's GEMM precision: 128x128 where B is the weight.
  CHECK(blk[0].params["precision"] == "fp8_block_128x128");
  CHECK(blk[1].params["precision"] == "fp8_block_128x128");
  CHECK(blk[2].params["precision"] == "fp8_block_1x128");
  CHECK(blk[0].id == "qkv_fprop_m8192_n6144_k4096_fp8_block_128x128");
  CHECK(blk[2].id == "qkv_wgrad_m6144_n4096_k8192_fp8_block_1x128");
  CHECK(recipe_of("fp8_block_1x128") == "fp8_block");
  CHECK(recipe_of("nvfp4") == "nvfp4");
  CHECK_THROWS_AS(recipe_of("fp8_block"), UsageError);  // a recipe, not a GEMM precision

  auto mx = model_gemms(llama8b(), "mxfp8", 8192, 1);
  CHECK(mx[4].params["a_scale"] == "vec32_ue8m0");
  CHECK(mx[4].params["b_scale"] == "vec32_ue8m0");
  CHECK(mx[4].params["a_type"] == "e4m3");
  auto fp4 = model_gemms(llama8b(), "nvfp4", 8192, 1);
  CHECK(fp4[7].params["a_type"] == "e2m1");
  CHECK(fp4[7].params["b_scale"] == "vec16_ue4m3");
  CHECK(fp4[7].params["layout"] == "TN");
}

TEST_CASE("model_grid: ungated MLP and head_dim apart from hidden per head and experts") {
  ModelConfig c = llama8b();
  c.gated_mlp = false;
  auto s = model_gemms(c, "bf16", 4096, 1);
  // fc1 out = 14336 (no gate): fprop 4096 x 14336 x 4096
  CHECK(s[6].id == "fc1_fprop_m4096_n14336_k4096_bf16");

  // Gemma-2-9B: hidden 3584, 16 heads of 256, 8 KV heads, intermediate 14336.
  ModelConfig g = llama8b();
  g.hidden_size = 3584;
  g.num_attention_heads = 16;
  g.num_key_value_heads = 8;
  g.head_dim = 256;
  auto gs = model_gemms(g, "bf16", 4096, 1);
  // qkv out (16 + 2*8) * 256 = 8192, in 3584; proj in 16 * 256 = 4096, out 3584.
  CHECK(gs[0].id == "qkv_fprop_m4096_n8192_k3584_bf16");
  CHECK(gs[3].id == "proj_fprop_m4096_n3584_k4096_bf16");
  CHECK(gs[5].id == "proj_wgrad_m3584_n4096_k4096_bf16");

  // Mixtral-8x7B: 8 experts, top-2; 4096 tokens route 4096 * 2 / 8 = 1024 to each expert.
  ModelConfig x = llama8b();
  x.num_experts = 8;
  x.experts_per_token = 2;
  auto xs = model_gemms(x, "bf16", 4096, 1);
  CHECK(xs[0].id == "qkv_fprop_m4096_n6144_k4096_bf16");  // attention sees every token
  CHECK(xs[6].id == "fc1_fprop_m1024_n28672_k4096_bf16");
  CHECK(xs[11].id == "fc2_wgrad_m4096_n14336_k1024_bf16");
  CHECK(xs[6].label.find("8 experts") != std::string::npos);
  // 4095 tokens: 4095 * 2 / 8 = 1023.75, rounded up to 1024.
  CHECK(model_gemms(x, "bf16", 4095, 1)[6].params["m"] == 1024);
}

TEST_CASE("model_grid: config JSON validation names the field") {
  json j = to_json(llama8b());
  CHECK(model_config_from_json(j, "t") == llama8b());
  json bad = j;
  bad["num_key_value_heads"] = 5;  // 32 query heads cannot be grouped over 5
  CHECK_THROWS_WITH(model_config_from_json(bad, "t"),
                    doctest::Contains("not a multiple of num_key_value_heads 5"));
  bad = j;
  bad.erase("head_dim");
  CHECK(model_config_from_json(bad, "t").head_dim == 128);  // 4096 / 32
  bad["num_attention_heads"] = 24;                          // 4096 / 24 does not divide
  bad["num_key_value_heads"] = 8;
  CHECK_THROWS_WITH(model_config_from_json(bad, "t"), doctest::Contains("give head_dim"));
  bad = j;
  bad["hidden_size"] = "4096";
  CHECK_THROWS_WITH(model_config_from_json(bad, "t"),
                    doctest::Contains("field 'hidden_size': expected an integer"));
  bad = j;
  bad["num_experts"] = 8;  // without experts_per_token
  CHECK_THROWS_AS(model_config_from_json(bad, "t"), UsageError);
}

TEST_CASE("model_grid: presets load and match their sources and are found by name") {
  auto presets = list_model_presets(kModels);
  REQUIRE(presets.size() >= 5);
  for (const auto& p : presets) {
    CAPTURE(p.key);
    CHECK(!p.config.source.empty());
    CHECK(model_gemms(p.config, "bf16", 4096, 1).size() == 12);
  }
  ModelConfig want = llama8b();
  ModelPreset p = find_model_preset(kModels, "LLAMA-3.1-8B");  // key or name, any case
  want.source = p.config.source;
  CHECK(p.config == want);
  CHECK(find_model_preset(kModels, "Mixtral-8x7B-v0.1").config.num_experts == 8);
  CHECK_THROWS_WITH_AS(find_model_preset(kModels, "llama-9"), doctest::Contains("llama-3.1-70b"),
                       UsageError);
}

TEST_CASE("model_grid: explicit shapes") {
  std::int64_t m, n, k;
  parse_mnk("4096x14336x4096", m, n, k);
  CHECK(m == 4096);
  CHECK(n == 14336);
  CHECK(k == 4096);
  parse_mnk("1X8X16", m, n, k);
  CHECK(m == 1);
  for (const char* bad : {"4096x14336", "4096x0x8", "ax1x1", "1x2x3x", "1x2x3x4", "-1x2x3", ""})
    CHECK_THROWS_AS(parse_mnk(bad, m, n, k), UsageError);
  Shape plain = explicit_gemm(512, 256, 128, "");
  CHECK(plain.params == json{{"m", 512}, {"n", 256}, {"k", 128}});
  CHECK(plain.id == "m512_n256_k128");
  CHECK(explicit_gemm(128, 256, 512, "fp8_block").id == "m128_n256_k512_fp8_block_128x128");
  Shape fp8 = explicit_gemm(1, 4096, 4096, "fp8");
  CHECK(fp8.id == "m1_n4096_k4096_fp8");
  CHECK(fp8.params["a_type"] == "e4m3");
  CHECK(fp8.params["layout"] == "TN");
}
