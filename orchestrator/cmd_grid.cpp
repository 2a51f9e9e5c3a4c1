// `abharness grid`: the 12 per-layer GEMMs of a model (docs/grids.md) and/or explicit shapes,
// written as a grid file that `abharness run` and `abharness roofline` read.
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include "commands.hpp"
#include "model/grid.hpp"
#include "model/model_grid.hpp"
#include "paths.hpp"
#include "system/data_dir.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

struct GridOptions {
  std::string model, model_file, output;
  bool list_models = false, plain = false;
  std::vector<std::string> precisions{"bf16"};
  std::int64_t micro_batch = 1, seq = 0, tokens = 0;
  int tp = 1;
  int hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, head_dim = 0, experts = 0,
      experts_per_token = 0;
  bool gated = true;
  std::vector<std::string> shapes;
  // Which flags were given: an override is applied only when the user typed it.
  std::set<std::string> given;
};

void list_models(const std::filesystem::path& dir) {
  auto presets = list_model_presets(dir);
  std::printf("%-16s %-18s %7s %7s %5s %4s %5s %5s %7s\n", "--model", "name", "hidden", "ffn",
              "heads", "kv", "hdim", "gated", "experts");
  for (const auto& p : presets) {
    const auto& c = p.config;
    std::string experts =
        c.num_experts ? std::to_string(c.num_experts) + "/top" + std::to_string(c.experts_per_token)
                      : "-";
    std::printf("%-16s %-18s %7d %7d %5d %4d %5d %5s %7s\n", p.key.c_str(), c.name.c_str(),
                c.hidden_size, c.intermediate_size, c.num_attention_heads, c.num_key_value_heads,
                c.head_dim, c.gated_mlp ? "yes" : "no", experts.c_str());
  }
  std::printf("\nSources:\n");
  for (const auto& p : presets) std::printf("  %s: %s\n", p.key.c_str(), p.config.source.c_str());
  std::printf("Presets are read from %s\n", dir.string().c_str());
}

bool has_model_flags(const GridOptions& o) {
  for (const char* f : {"--hidden-size", "--intermediate-size", "--heads", "--kv-heads",
                        "--head-dim", "--gated-mlp", "--experts", "--experts-per-token"})
    if (o.given.count(f)) return true;
  return false;
}

// The preset or file, then each hyperparameter flag on top; the result goes back through the
// JSON mapping so a command-line model is validated exactly like a file.
ModelConfig resolve_model(const GridOptions& o, const std::filesystem::path& data) {
  json j;
  std::string origin;
  if (!o.model.empty() && !o.model_file.empty())
    throw UsageError("grid: give --model or --model-file, not both");
  if (!o.model.empty()) {
    ModelPreset p = find_model_preset(data / "models", o.model);
    j = to_json(p.config);
    origin = p.path.string();
  } else if (!o.model_file.empty()) {
    j = to_json(load_model_config(o.model_file));
    origin = o.model_file;
  } else {
    for (const char* f :
         {"--hidden-size", "--intermediate-size", "--heads", "--kv-heads", "--gated-mlp"})
      if (!o.given.count(f))
        throw UsageError(std::string("grid: a model given by flags alone needs ") + f +
                         " (and --hidden-size, --intermediate-size, --heads, --kv-heads, "
                         "--gated-mlp); or start from --model / --model-file");
    j = json{{"schema_version", 1}, {"name", "custom"}, {"source", "command-line flags"}};
    origin = "command line";
  }
  std::string changed;
  auto set = [&](const char* flag, const char* key, const json& v) {
    if (!o.given.count(flag)) return;
    j[key] = v;
    changed += (changed.empty() ? "" : ", ") + std::string(key) + "=" + v.dump();
  };
  set("--hidden-size", "hidden_size", o.hidden);
  set("--intermediate-size", "intermediate_size", o.intermediate);
  set("--heads", "num_attention_heads", o.heads);
  set("--kv-heads", "num_key_value_heads", o.kv_heads);
  set("--head-dim", "head_dim", o.head_dim);
  set("--gated-mlp", "gated_mlp", o.gated);
  set("--experts", "num_experts", o.experts);
  set("--experts-per-token", "experts_per_token", o.experts_per_token);
  if (!changed.empty() && (!o.model.empty() || !o.model_file.empty())) {
    j["name"] = j["name"].get<std::string>() + " (modified: " + changed + ")";
    j["source"] = j["source"].get<std::string>() + "; overridden on the command line: " + changed;
  }
  return model_config_from_json(j, "model from " + origin);
}

void run_grid(const GridOptions& o) {
  if (!o.output.empty()) refuse_output_in_run(o.output, "--output");
  const auto data = resolve_data_dir();
  if (o.list_models) {
    list_models(data / "models");
    return;
  }
  for (const auto& p : o.precisions) check_precision(p);
  const bool want_model = !o.model.empty() || !o.model_file.empty() || has_model_flags(o);
  if (!want_model && o.shapes.empty())
    throw UsageError(
        "grid: nothing to write: give --model NAME (see --list-models), "
        "--model-file PATH, hyperparameter flags, or --shape MxNxK");
  if (o.plain && o.given.count("--precision"))
    throw UsageError("grid: --plain writes {m, n, k} only; it cannot be combined with --precision");
  if (o.plain && want_model)
    throw UsageError(
        "grid: --plain applies to --shape only; model GEMMs always carry their "
        "precision and operand types");

  Grid grid;
  json generated{{"command", "grid"}};
  if (want_model || !o.plain) generated["precisions"] = o.precisions;
  if (want_model) {
    if (o.given.count("--tokens") && (o.given.count("--seq") || o.given.count("--micro-batch")))
      throw UsageError("grid: give --tokens, or --micro-batch and --seq, not both");
    std::int64_t tokens = o.tokens;
    if (!o.given.count("--tokens")) {
      if (!o.given.count("--seq"))
        throw UsageError(
            "grid: a model grid needs the sequence length: --seq N (and "
            "--micro-batch B, default 1), or --tokens T");
      if (o.micro_batch <= 0 || o.seq <= 0)
        throw UsageError("grid: --micro-batch and --seq must be positive");
      tokens = o.micro_batch * o.seq;
      generated["micro_batch"] = o.micro_batch;
      generated["seq"] = o.seq;
    }
    ModelConfig cfg = resolve_model(o, data);
    generated["model"] = to_json(cfg);
    generated["tokens"] = tokens;
    generated["tp"] = o.tp;
    for (const auto& p : o.precisions)
      for (auto& s : model_gemms(cfg, p, tokens, o.tp)) grid.shapes.push_back(std::move(s));
  }
  for (const auto& text : o.shapes) {
    std::int64_t m, n, k;
    parse_mnk(text, m, n, k);
    if (o.plain) {
      grid.shapes.push_back(explicit_gemm(m, n, k, ""));
    } else {
      for (const auto& p : o.precisions) grid.shapes.push_back(explicit_gemm(m, n, k, p));
    }
  }
  // Round-trip through the reader: what we write is exactly what `run` will accept (unique,
  // safe ids), and a collision is reported here rather than at the start of a sweep.
  json out = to_json(grid);
  grid_from_json(out, "generated grid");
  out["generated_by"] = generated;
  if (o.output.empty() || o.output == "-") {
    std::cout << out.dump(2) << "\n";
  } else {
    write_json_atomic(o.output, out);
    std::cerr << "abharness grid: wrote " << grid.shapes.size() << " shapes to " << o.output
              << "\n";
  }
}

}  // namespace
}  // namespace abh

void add_grid_command(CLI::App& app) {
  using namespace abh;
  auto o = std::make_shared<GridOptions>();
  CLI::App* sub = app.add_subcommand(
      "grid", "Write a grid of GEMM shapes: the 12 per-layer GEMMs of a model, or explicit shapes");
  sub->footer(R"(Examples:
  abharness grid --list-models
  abharness grid --model llama-3.1-8b --precision bf16 --micro-batch 2 --seq 4096 --tp 1 -o shapes.json
  abharness grid --model llama-3.1-70b --precision bf16,fp8 --seq 8192 --tp 8 -o shapes.json
  abharness grid --model-file my_model.json --seq 4096 -o shapes.json
  abharness grid --model mistral-7b --kv-heads 4 --seq 4096 -o shapes.json   # override a preset
  abharness grid --shape 4096x14336x4096 --shape 1x4096x4096 --precision fp8 -o shapes.json
  abharness grid --shape 512x512x512 --plain -o cpu.json                    # {m,n,k} only
Shapes, conventions and the params vocabulary: docs/grids.md.)");
  sub->add_option("--model", o->model,
                  "model preset (a data/models/*.json key, see --list-models)");
  sub->add_option("--model-file", o->model_file, "model hyperparameters as a JSON file");
  sub->add_flag("--list-models", o->list_models, "list the model presets with their sources");
  sub->add_option("--precision", o->precisions,
                  "bf16, fp8, fp8_block, mxfp8, nvfp4; several separated by commas (default bf16)")
      ->delimiter(',');
  sub->add_option("--micro-batch", o->micro_batch, "sequences per micro-batch (default 1)");
  sub->add_option("--seq", o->seq, "sequence length; tokens = micro-batch x seq");
  sub->add_option("--tokens", o->tokens, "tokens per micro-batch, instead of --seq");
  sub->add_option("--tp", o->tp, "tensor-parallel degree (default 1)");
  sub->add_option("--hidden-size", o->hidden, "override hidden_size");
  sub->add_option("--intermediate-size", o->intermediate, "override intermediate_size");
  sub->add_option("--heads", o->heads, "override num_attention_heads");
  sub->add_option("--kv-heads", o->kv_heads, "override num_key_value_heads (GQA)");
  sub->add_option("--head-dim", o->head_dim, "override head_dim");
  sub->add_option("--gated-mlp", o->gated,
                  "override gated_mlp: true (FC1 = gate and up fused) or false");
  sub->add_option("--experts", o->experts, "override num_experts (mixture of experts)");
  sub->add_option("--experts-per-token", o->experts_per_token,
                  "override experts_per_token (top-k)");
  sub->add_option("--shape", o->shapes, "an explicit MxNxK shape (repeatable)");
  sub->add_flag("--plain", o->plain,
                "explicit shapes as {m, n, k} only, for plugins without a precision (cpu-gemm)");
  sub->add_option("-o,--output", o->output, "grid file to write (default: stdout)");
  sub->callback([o, sub] {
    for (const CLI::Option* opt : sub->get_options())
      if (opt->count() > 0) o->given.insert(opt->get_name());
    run_grid(*o);
  });
}
