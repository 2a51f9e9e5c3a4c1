// `abharness roofline`: each shape's speed-of-light time on a named GPU (docs/roofline.md), so
// a measured time can be read as a fraction of what the hardware allows.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "fraction_option.hpp"
#include "model/grid.hpp"
#include "model/model_grid.hpp"
#include "stats/roofline.hpp"
#include "system/data_dir.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

struct RooflineCliOptions {
  std::string grid, gpu, gpu_table, precision, json_out;
  bool list_gpus = false;
  double compute_fraction = 0, memory_fraction = 0, launch_floor_us = 0;
  bool has_compute_fraction = false, has_memory_fraction = false, has_launch_floor = false;
};

std::string join_peaks(const GpuSpec& g) {
  std::string s;
  for (const auto& [k, v] : g.peak_tflops) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.1f", s.empty() ? "" : ", ", k.c_str(), v);
    s += buf;
  }
  return s;
}

void print_gpus(const GpuTable& t) {
  std::printf("%-24s %-40s %-34s %s\n", "--gpu", "form factor", "dense TFLOP/s", "TB/s");
  for (const auto& g : t.gpus)
    std::printf("%-24s %-40s %-34s %.3g\n", ("\"" + g.name + "\"").c_str(), g.form_factor.c_str(),
                join_peaks(g).c_str(), g.memory_tbps);
  std::printf("\nSources:\n");
  for (const auto& g : t.gpus) std::printf("  %s: %s\n", g.name.c_str(), g.source.c_str());
  std::printf("Table: %s\n", t.origin.c_str());
}

// The fractions and launch floor: the table's measured defaults unless a flag overrides them.
RooflineOptions roofline_options(const RooflineCliOptions& o, const GpuTable& table) {
  RooflineOptions opt = default_roofline_options(table);
  if (o.has_compute_fraction)
    for (auto& [p, f] : opt.compute_fraction) f = o.compute_fraction;
  if (o.has_memory_fraction) opt.memory_fraction = o.memory_fraction;
  if (o.has_launch_floor) opt.launch_floor_s = o.launch_floor_us * 1e-6;
  return opt;
}

// The GPU and where each number of the model comes from: a flag, or a measurement and its date.
void print_basis(const RooflineCliOptions& o, const GpuTable& table, const GpuSpec& gpu,
                 const RooflineOptions& opt) {
  const Calibration& c = table.calibration;
  std::printf("GPU: %s (%s): dense %s TFLOP/s, %.3g TB/s\n", gpu.name.c_str(),
              gpu.form_factor.c_str(), join_peaks(gpu).c_str(), gpu.memory_tbps);
  std::printf("  source: %s\n", gpu.source.c_str());
  if (o.has_compute_fraction) {
    std::printf("Compute fraction: %.3f for every precision (--compute-fraction)\n",
                o.compute_fraction);
  } else {
    std::printf("Compute fraction = measured / datasheet peak on %s (%s):\n", c.gpu.c_str(),
                c.date.c_str());
    for (const auto& [key, tflops] : c.measured_tflops)
      std::printf("  %s %.3f: %s\n", key.c_str(), opt.compute_fraction.at(key),
                  c.how.at(key).c_str());
    std::printf("  others: %s\n", c.unmeasured_basis.c_str());
  }
  if (o.has_memory_fraction) {
    std::printf("Memory fraction: %.3f (--memory-fraction)\n", opt.memory_fraction);
  } else {
    std::printf("Memory fraction %.3f: %s\n", opt.memory_fraction, c.how.at("memory").c_str());
  }
  if (o.has_launch_floor) {
    std::printf("Launch floor: %.3g us (--launch-floor-us)\n", opt.launch_floor_s * 1e6);
  } else {
    std::printf("Launch floor %.3g us: %s\n", opt.launch_floor_s * 1e6,
                table.launch_floor_basis.c_str());
  }
}

// One row per shape and the sum; returns the summed speed-of-light time in seconds.
double print_rows(const Grid& grid, const std::vector<RooflineResult>& results) {
  std::printf("\n%-48s %7s %7s %7s %-17s %9s %9s %7s %10s %10s %10s %-7s\n", "shape", "M", "N", "K",
              "precision", "GFLOP", "MB", "FLOP/B", "compute_us", "memory_us", "sol_us", "bound");
  double total = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const auto& p = grid.shapes[i].params;
    total += r.sol_s;
    std::printf("%-48s %7lld %7lld %7lld %-17s %9.2f %9.2f %7.0f %10.2f %10.2f %10.2f %-7s\n",
                grid.shapes[i].id.c_str(), p["m"].get<long long>(), p["n"].get<long long>(),
                p["k"].get<long long>(), r.precision.c_str(), r.flops * 1e-9, r.bytes * 1e-6,
                r.flops / r.bytes, r.compute_s * 1e6, r.memory_s * 1e6, r.sol_s * 1e6,
                r.bound.c_str());
  }
  std::printf("%-48s %102.2f\n", "sum of speed-of-light times", total * 1e6);
  return total;
}

void write_roofline_json(const RooflineCliOptions& o, const GpuTable& table, const GpuSpec& gpu,
                         const Grid& grid, const std::vector<RooflineResult>& results,
                         double total) {
  json rows = json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    rows.push_back({{"id", grid.shapes[i].id},
                    {"precision", r.precision},
                    {"flops", r.flops},
                    {"bytes", r.bytes},
                    {"scale_bytes", r.scale_bytes},
                    {"peak_tflops", r.peak_tflops},
                    {"compute_fraction", r.compute_fraction},
                    {"memory_fraction", r.memory_fraction},
                    {"compute_s", r.compute_s},
                    {"memory_s", r.memory_s},
                    {"launch_s", r.launch_s},
                    {"sol_s", r.sol_s},
                    {"bound", r.bound}});
  }
  write_json_atomic(o.json_out, json{{"schema_version", 1},
                                     {"gpu", gpu.name},
                                     {"gpu_table", table.origin},
                                     {"grid", o.grid},
                                     {"shapes", rows},
                                     {"sum_sol_s", total}});
}

void run_roofline(const RooflineCliOptions& o) {
  const auto table_path =
      o.gpu_table.empty() ? resolve_data_dir() / "gpus.json" : std::filesystem::path(o.gpu_table);
  const GpuTable table = load_gpu_table(table_path);
  if (o.list_gpus) {
    print_gpus(table);
    return;
  }
  const GpuSpec& gpu = find_gpu(table, o.gpu);
  if (o.grid.empty()) throw UsageError("roofline: give --grid shapes.json");
  Grid grid = load_grid(o.grid);
  if (!o.precision.empty()) {
    check_gemm_precision(o.precision);
    for (auto& s : grid.shapes)
      if (!s.params.contains("precision")) s.params["precision"] = o.precision;
  }
  const RooflineOptions opt = roofline_options(o, table);
  std::vector<RooflineResult> results;
  for (const auto& s : grid.shapes) results.push_back(roofline(s, gpu, opt));
  print_basis(o, table, gpu, opt);
  const double total = print_rows(grid, results);
  if (!o.json_out.empty()) write_roofline_json(o, table, gpu, grid, results, total);
}

}  // namespace
}  // namespace abh

void add_roofline_command(CLI::App& app) {
  using namespace abh;
  auto o = std::make_shared<RooflineCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "roofline",
      "Print each shape's speed-of-light time (compute, memory, launch bounds) on a GPU");
  sub->footer(R"(Examples:
  abharness roofline --list-gpus
  abharness roofline --grid shapes.json --gpu "NVIDIA H200"
  abharness roofline --grid cpu.json --gpu "NVIDIA B200" --precision nvfp4   # shapes without one
  abharness roofline --grid shapes.json --gpu "NVIDIA H100 80GB HBM3" --compute-fraction 0.75
The model, the GPU table and the default fractions: docs/roofline.md.)");
  sub->add_option("--grid", o->grid, "grid file (from `abharness grid`)");
  sub->add_option("--gpu", o->gpu, "GPU name exactly as nvidia-smi reports it (see --list-gpus)");
  sub->add_flag("--list-gpus", o->list_gpus, "list the known GPUs with their sources");
  sub->add_option("--gpu-table", o->gpu_table, "GPU table to use instead of data/gpus.json");
  sub->add_option("--precision", o->precision,
                  "GEMM precision for shapes whose params have none (e.g. --plain grids): bf16, "
                  "fp8, fp8_block_1x128, fp8_block_128x128, mxfp8, nvfp4");
  auto* cf = add_fraction_option(*sub, "--compute-fraction", o->compute_fraction,
                                 "achievable fraction of the peak, for every precision")
                 ->check(CLI::Range(1e-6, 1.0));
  auto* mf = add_fraction_option(*sub, "--memory-fraction", o->memory_fraction,
                                 "achievable fraction of the memory bandwidth")
                 ->check(CLI::Range(1e-6, 1.0));
  auto* lf = sub->add_option("--launch-floor-us", o->launch_floor_us,
                             "shortest time any kernel takes, in microseconds")
                 ->check(CLI::Range(0.0, 1e6));
  sub->add_option("--json", o->json_out, "also write the results as JSON to this file");
  sub->callback([o, cf, mf, lf] {
    o->has_compute_fraction = cf->count() > 0;
    o->has_memory_fraction = mf->count() > 0;
    o->has_launch_floor = lf->count() > 0;
    run_roofline(*o);
  });
}
