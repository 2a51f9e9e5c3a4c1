#include "model/model_grid.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One linear layer on one tensor-parallel rank: in -> out features, and the tokens it sees.
struct Linear {
  const char* op;
  std::int64_t in, out, tokens;
  bool per_expert;
};

}  // namespace

ModelConfig model_config_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  schema_version(j, where, 1, "model");
  ModelConfig c;
  c.name = field<std::string>(j, "name", where);
  c.source = field<std::string>(j, "source", where);
  c.hidden_size = field<int>(j, "hidden_size", where);
  c.intermediate_size = field<int>(j, "intermediate_size", where);
  c.num_attention_heads = field<int>(j, "num_attention_heads", where);
  c.num_key_value_heads = field<int>(j, "num_key_value_heads", where);
  // As in Hugging Face configs, head_dim defaults to hidden / heads, but only when that divides:
  // a silent truncation would give every attention GEMM a wrong K or N.
  if (j.contains("head_dim")) {
    c.head_dim = field<int>(j, "head_dim", where);
  } else if (c.num_attention_heads > 0 && c.hidden_size % c.num_attention_heads == 0) {
    c.head_dim = c.hidden_size / c.num_attention_heads;
  } else {
    throw Error(where + ": missing field 'head_dim' and hidden_size " +
                std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
                std::to_string(c.num_attention_heads) + ": give head_dim");
  }
  c.gated_mlp = field<bool>(j, "gated_mlp", where);
  c.num_hidden_layers = field_or<int>(j, "num_hidden_layers", where, 0);
  c.num_experts = field_or<int>(j, "num_experts", where, 0);
  c.experts_per_token = field_or<int>(j, "experts_per_token", where, 0);
  validate(c, where);
  return c;
}

json to_json(const ModelConfig& c) {
  json j{{"schema_version", 1},
         {"name", c.name},
         {"source", c.source},
         {"hidden_size", c.hidden_size},
         {"intermediate_size", c.intermediate_size},
         {"num_attention_heads", c.num_attention_heads},
         {"num_key_value_heads", c.num_key_value_heads},
         {"head_dim", c.head_dim},
         {"gated_mlp", c.gated_mlp}};
  if (c.num_hidden_layers > 0) j["num_hidden_layers"] = c.num_hidden_layers;
  if (c.num_experts > 0) {
    j["num_experts"] = c.num_experts;
    j["experts_per_token"] = c.experts_per_token;
  }
  return j;
}

void validate(const ModelConfig& c, const std::string& where) {
  auto positive = [&](int v, const char* f) {
    if (v <= 0)
      throw UsageError(where + ": '" + f + "' is " + std::to_string(v) +
                       ": it must be a positive integer");
  };
  positive(c.hidden_size, "hidden_size");
  positive(c.intermediate_size, "intermediate_size");
  positive(c.num_attention_heads, "num_attention_heads");
  positive(c.num_key_value_heads, "num_key_value_heads");
  positive(c.head_dim, "head_dim");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw UsageError(where + ": num_attention_heads " + std::to_string(c.num_attention_heads) +
                     " is not a multiple of num_key_value_heads " +
                     std::to_string(c.num_key_value_heads) +
                     ": grouped-query attention shares each KV head among a whole number of "
                     "query heads");
  if (c.num_hidden_layers < 0)
    throw UsageError(where + ": 'num_hidden_layers' must not be negative");
  if (c.num_experts < 0 || c.experts_per_token < 0)
    throw UsageError(where + ": 'num_experts' and 'experts_per_token' must not be negative");
  if ((c.num_experts > 0) != (c.experts_per_token > 0) || c.experts_per_token > c.num_experts)
    throw UsageError(where +
                     ": a mixture of experts needs both 'num_experts' and "
                     "'experts_per_token', with experts_per_token <= num_experts (got " +
                     std::to_string(c.num_experts) + " and " + std::to_string(c.experts_per_token) +
                     ")");
}

ModelConfig load_model_config(const fs::path& path) {
  try {
    return model_config_from_json(read_json_file(path, JsonLimits{1u << 20, 8}), path.string());
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string("model file: ") + e.what());
  }
}

std::vector<ModelPreset> list_model_presets(const fs::path& models_dir) {
  std::error_code ec;
  if (!fs::is_directory(models_dir, ec))
    throw UsageError("model presets: " + models_dir.string() +
                     " is not a directory: set ABH_DATA_DIR to abharness's data/ folder");
  std::vector<ModelPreset> out;
  for (const auto& entry : fs::directory_iterator(models_dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    out.push_back({entry.path().stem().string(), entry.path(), load_model_config(entry.path())});
  }
  std::sort(out.begin(), out.end(),
            [](const ModelPreset& a, const ModelPreset& b) { return a.key < b.key; });
  return out;
}

ModelPreset find_model_preset(const fs::path& models_dir, const std::string& name) {
  auto presets = list_model_presets(models_dir);
  const std::string want = lower(name);
  for (auto& p : presets)
    if (lower(p.key) == want || lower(p.config.name) == want) return p;
  std::string known;
  for (const auto& p : presets) known += (known.empty() ? "" : ", ") + p.key;
  throw UsageError("unknown model '" + name + "'; known presets (" + models_dir.string() +
                   "): " + known + ". Or give --model-file path.json");
}

const std::vector<std::string>& known_precisions() {
  static const std::vector<std::string> v{"bf16", "fp8", "fp8_block", "mxfp8", "nvfp4"};
  return v;
}

namespace {
void check_member(const std::vector<std::string>& v, const std::string& x, const char* what) {
  if (std::find(v.begin(), v.end(), x) != v.end()) return;
  throw UsageError(std::string("unknown ") + what + " '" + x + "': use one of " + join(v, ", "));
}
}  // namespace

void check_precision(const std::string& recipe) {
  check_member(known_precisions(), recipe, "precision");
}

const std::vector<std::string>& known_gemm_precisions() {
  static const std::vector<std::string> v{"bf16",  "fp8",  "fp8_block_1x128", "fp8_block_128x128",
                                          "mxfp8", "nvfp4"};
  return v;
}

void check_gemm_precision(const std::string& gemm_precision) {
  check_member(known_gemm_precisions(), gemm_precision, "GEMM precision");
}

std::string recipe_of(const std::string& gemm_precision) {
  check_gemm_precision(gemm_precision);
  return gemm_precision.rfind("fp8_block", 0) == 0 ? "fp8_block" : gemm_precision;
}

const char* pass_name(GemmPass p) {
  switch (p) {
    case GemmPass::fprop:
      return "fprop";
    case GemmPass::dgrad:
      return "dgrad";
    case GemmPass::wgrad:
      return "wgrad";
  }
  return "?";
}

GemmOperands gemm_operands(const std::string& recipe, GemmPass pass) {
  check_precision(recipe);
  // Which tensor each operand is: activations and weights are quantized in the forward format,
  // output gradients in the backward one (only tensor-scaled fp8 uses a different one, E5M2).
  const bool a_is_grad = pass != GemmPass::fprop;
  const bool b_is_weight = pass != GemmPass::wgrad;
  GemmOperands o;
  o.precision = recipe;
  o.d_type = "bf16";
  if (recipe == "bf16") {
    o.a_type = o.b_type = "bf16";
    o.a_scale = o.b_scale = "none";
    o.layout = pass == GemmPass::fprop ? "TN" : pass == GemmPass::dgrad ? "NN" : "NT";
    return o;
  }
  // Block scales run along K and Hopper FP8 tensor cores read both operands K-major, so the
  // quantizer writes each operand in the layout its GEMM reads (Transformer Engine's "columnwise"
  // copy) and every quantized GEMM runs TN.
  o.layout = "TN";
  if (recipe == "fp8") {
    o.a_type = a_is_grad ? "e5m2" : "e4m3";
    o.b_type = "e4m3";
    o.a_scale = o.b_scale = "scalar_32f";
  } else if (recipe == "fp8_block") {
    // DeepSeek-V3 / Transformer Engine Float8BlockScaling: E4M3 everywhere, 1x128 scales for
    // activations and gradients, 128x128 for weights.
    o.a_type = o.b_type = "e4m3";
    o.a_scale = "vec128_32f";
    o.b_scale = b_is_weight ? "blk128x128_32f" : "vec128_32f";
    o.precision = b_is_weight ? "fp8_block_128x128" : "fp8_block_1x128";
  } else if (recipe == "mxfp8") {
    o.a_type = o.b_type = "e4m3";
    o.a_scale = o.b_scale = "vec32_ue8m0";
  } else {  // nvfp4
    o.a_type = o.b_type = "e2m1";
    o.a_scale = o.b_scale = "vec16_ue4m3";
  }
  return o;
}

GemmOperands default_operands(const std::string& gemm_precision) {
  const std::string recipe = recipe_of(gemm_precision);
  return gemm_operands(recipe,
                       gemm_precision == "fp8_block_1x128" ? GemmPass::wgrad : GemmPass::fprop);
}

json gemm_params(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& recipe,
                 GemmPass pass) {
  GemmOperands o = gemm_operands(recipe, pass);
  return json{{"m", m},
              {"n", n},
              {"k", k},
              {"precision", o.precision},
              {"layout", o.layout},
              {"a_type", o.a_type},
              {"b_type", o.b_type},
              {"d_type", o.d_type},
              {"a_scale", o.a_scale},
              {"b_scale", o.b_scale}};
}

std::vector<Shape> model_gemms(const ModelConfig& c, const std::string& recipe, std::int64_t tokens,
                               int tp) {
  validate(c, "model '" + c.name + "'");
  check_precision(recipe);
  if (tokens <= 0)
    throw UsageError("tokens (micro-batch x sequence length) must be positive, got " +
                     std::to_string(tokens));
  if (tp <= 0) throw UsageError("--tp must be a positive integer, got " + std::to_string(tp));
  auto divides = [&](int v, const char* what) {
    if (v % tp != 0)
      throw UsageError("model '" + c.name + "': tensor-parallel degree " + std::to_string(tp) +
                       " does not divide " + what + " " + std::to_string(v) +
                       ": each rank must hold whole heads and an equal share of the MLP; pick a "
                       "tp that divides it");
  };
  divides(c.num_attention_heads, "num_attention_heads");
  divides(c.num_key_value_heads, "num_key_value_heads");
  divides(c.intermediate_size, "intermediate_size");

  const std::int64_t hidden = c.hidden_size;
  const std::int64_t q_heads = c.num_attention_heads / tp;
  const std::int64_t kv_heads = c.num_key_value_heads / tp;
  const std::int64_t ffn = c.intermediate_size / tp;
  const std::int64_t fc1_out = (c.gated_mlp ? 2 : 1) * ffn;
  std::int64_t mlp_tokens = tokens;
  if (c.num_experts > 0)
    mlp_tokens = (tokens * c.experts_per_token + c.num_experts - 1) / c.num_experts;

  const Linear layers[] = {
      {"qkv", hidden, (q_heads + 2 * kv_heads) * c.head_dim, tokens, false},
      {"proj", q_heads * c.head_dim, hidden, tokens, false},
      {"fc1", hidden, fc1_out, mlp_tokens, c.num_experts > 0},
      {"fc2", ffn, hidden, mlp_tokens, c.num_experts > 0},
  };
  std::vector<Shape> shapes;
  for (const auto& l : layers) {
    for (GemmPass pass : {GemmPass::fprop, GemmPass::dgrad, GemmPass::wgrad}) {
      std::int64_t m = 0, n = 0, k = 0;
      switch (pass) {
        case GemmPass::fprop:
          m = l.tokens, n = l.out, k = l.in;
          break;
        case GemmPass::dgrad:
          m = l.tokens, n = l.in, k = l.out;
          break;
        case GemmPass::wgrad:
          m = l.out, n = l.in, k = l.tokens;
          break;
      }
      Shape s;
      s.params = gemm_params(m, n, k, recipe, pass);
      s.id = std::string(l.op) + "_" + pass_name(pass) + "_m" + std::to_string(m) + "_n" +
             std::to_string(n) + "_k" + std::to_string(k) + "_" +
             s.params["precision"].get<std::string>();
      s.label = std::string(l.op) + " " + pass_name(pass);
      if (l.per_expert)
        s.label += " (one of " + std::to_string(c.num_experts) + " experts, top-" +
                   std::to_string(c.experts_per_token) + " balanced routing)";
      check_safe_name(s.id, "generated shape id");
      shapes.push_back(std::move(s));
    }
  }
  return shapes;
}

Shape explicit_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& recipe) {
  if (m <= 0 || n <= 0 || k <= 0)
    throw UsageError("shape " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                     std::to_string(k) + ": M, N and K must be positive");
  Shape s;
  if (recipe.empty()) {
    s.params = json{{"m", m}, {"n", n}, {"k", k}};
  } else {
    s.params = gemm_params(m, n, k, recipe, GemmPass::fprop);
  }
  s.id = shape_id_from_params(s.params);
  s.label = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  check_safe_name(s.id, "shape id");
  return s;
}

void parse_mnk(const std::string& text, std::int64_t& m, std::int64_t& n, std::int64_t& k) {
  std::int64_t v[3] = {0, 0, 0};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(p, end, v[i]);
    bool sep_ok = i < 2 ? (next != end && (*next == 'x' || *next == 'X')) : next == end;
    if (ec != std::errc() || next == p || !sep_ok || v[i] <= 0)
      throw UsageError("--shape '" + text +
                       "': expected MxNxK with three positive integers, e.g. 4096x14336x4096");
    p = next + (i < 2 ? 1 : 0);
  }
  m = v[0], n = v[1], k = v[2];
}

}  // namespace abh
