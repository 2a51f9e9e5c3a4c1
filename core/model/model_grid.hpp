// The per-layer GEMMs of a transformer block, derived from its hyperparameters. A layer
// trains four linear layers (QKV, attention output "proj", FC1, FC2); each runs three GEMMs
// (fprop, dgrad, wgrad), hence 12 shapes per layer. docs/grids.md derives them and defines every
// parameter written into a shape's params (the vocabulary the GEMM plugins read).
//
// Conventions (docs/grids.md has the full text):
//   A linear layer computes Y[T, out] = X[T, in] . W[out, in]^T with T = micro-batch x sequence
//   tokens. Every shape is a row-major D[M, N] = A[M, K] . B[K, N]:
//     fprop  Y  = X  . W^T   M = T,   N = out, K = in
//     dgrad  dX = dY . W     M = T,   N = in,  K = out
//     wgrad  dW = dY^T . X   M = out, N = in,  K = T
//   "layout" is (transa, transb) of the column-major cuBLASLt call that computes it (m = N,
//   n = M, matrix A = operand B, matrix B = operand A): fprop "TN", dgrad "NN", wgrad "NT" in
//   bf16; quantized precisions run every pass "TN" (both operands K-major, see docs/grids.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/grid.hpp"
#include "system/json_io.hpp"

namespace abh {

// Hyperparameters, named as in Hugging Face config.json files so a preset can be checked against
// its source by eye.
struct ModelConfig {
  std::string name;
  std::string source;  // where the numbers come from (model card / config.json)
  int hidden_size = 0;
  int intermediate_size = 0;    // per expert for a mixture of experts
  int num_attention_heads = 0;  // query heads
  int num_key_value_heads = 0;  // grouped-query attention: KV heads shared by groups of queries
  int head_dim = 0;
  bool gated_mlp = true;      // FC1 computes gate and up projections fused: N = 2 x intermediate
  int num_hidden_layers = 0;  // informational (the grid is per layer)
  int num_experts = 0;        // 0: dense MLP
  int experts_per_token = 0;  // top-k routing, with num_experts
  bool operator==(const ModelConfig&) const = default;
};

ModelConfig model_config_from_json(const json& j, const std::string& where);
json to_json(const ModelConfig& c);
ModelConfig load_model_config(const std::filesystem::path& path);
// Rejects non-positive sizes and inconsistent attention (heads not a multiple of KV heads),
// naming the field and the fix.
void validate(const ModelConfig& c, const std::string& where);

struct ModelPreset {
  std::string key;  // file stem: what --model takes ("llama-3.1-8b")
  std::filesystem::path path;
  ModelConfig config;
};
// Every data/models/*.json, sorted by key. A damaged preset is an error, not a skipped entry.
std::vector<ModelPreset> list_model_presets(const std::filesystem::path& models_dir);
// Matches `name` against the key or the config's "name", case-insensitively; UsageError listing
// the known presets otherwise.
ModelPreset find_model_preset(const std::filesystem::path& models_dir, const std::string& name);

// Two levels of precision names. A *recipe* is what a user asks a grid for: bf16, fp8,
// fp8_block, mxfp8, nvfp4. A *GEMM precision* is what one shape's params carry, in the cuBLASLt
// plugin's vocabulary: bf16, fp8, fp8_block_1x128 (both operands 1x128), fp8_block_128x128
// (A 1x128, B 128x128), mxfp8, nvfp4. Only fp8_block differs: its weight GEMMs (fprop, dgrad)
// are 128x128 on the weight side and its wgrad is 1x128 on both sides.
const std::vector<std::string>& known_precisions();  // recipes
void check_precision(const std::string& recipe);
const std::vector<std::string>& known_gemm_precisions();
void check_gemm_precision(const std::string& gemm_precision);
std::string recipe_of(const std::string& gemm_precision);

enum class GemmPass { fprop, dgrad, wgrad };
const char* pass_name(GemmPass p);

// What each operand of one GEMM is stored as. Values are the param vocabulary of docs/grids.md.
struct GemmOperands {
  std::string precision;               // the GEMM precision (see above)
  std::string a_type, b_type, d_type;  // bf16 | e4m3 | e5m2 | e2m1
  std::string a_scale, b_scale;        // none | scalar_32f | vec128_32f | blk128x128_32f |
                                       // vec32_ue8m0 | vec16_ue4m3
  std::string layout;                  // TN | NN | NT
};
// Operand roles per pass: fprop A = activation, B = weight; dgrad A = output gradient,
// B = weight; wgrad A = output gradient (transposed), B = activation.
GemmOperands gemm_operands(const std::string& recipe, GemmPass pass);
// The operands a shape of this GEMM precision has when its params do not spell them out: the
// fprop roles of its recipe (fp8_block_1x128: the wgrad roles, its only use).
GemmOperands default_operands(const std::string& gemm_precision);

// The params object of one GEMM: m, n, k and the GemmOperands fields.
json gemm_params(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& recipe,
                 GemmPass pass);

// The 12 per-layer GEMMs for `tokens` tokens on one rank of a `tp`-way tensor-parallel group
// (Megatron-style: QKV and FC1 column-parallel, proj and FC2 row-parallel). For a mixture of
// experts, FC1/FC2 are one expert's GEMMs under balanced routing:
// ceil(tokens x experts_per_token / num_experts) tokens. Throws UsageError when tp does not
// divide the heads, KV heads or intermediate size.
std::vector<Shape> model_gemms(const ModelConfig& c, const std::string& recipe, std::int64_t tokens,
                               int tp);

// An explicit M x N x K shape: plain {m, n, k} when recipe is empty, else the fprop operand
// roles of that recipe.
Shape explicit_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& recipe);
// Parses "MxNxK" (positive integers); UsageError otherwise.
void parse_mnk(const std::string& text, std::int64_t& m, std::int64_t& n, std::int64_t& k);

}  // namespace abh
