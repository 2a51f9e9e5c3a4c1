// The speed-of-light time of one GEMM on one GPU. A kernel cannot beat the slowest of:
//   compute  2 M N K / (dense peak of its precision x achievable compute fraction)
//   memory   minimum bytes (A and B read once incl. their scale factors, D written once)
//            / (peak bandwidth x achievable memory fraction)
//   launch   a floor for any kernel, however small the problem
// The GPU figures and the calibration of the fractions live in data/gpus.json, each with its
// source; docs/roofline.md explains the model and how the fractions were measured.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/grid.hpp"
#include "system/json_io.hpp"

namespace abh {

struct GpuSpec {
  std::string name;  // exactly as nvidia-smi / cudaGetDeviceProperties report it
  std::string form_factor;
  std::map<std::string, double> peak_tflops;  // dense, keyed by "bf16" | "fp8" | "fp4"
  double memory_tbps = 0;                     // 10^12 bytes/s
  std::vector<std::string> precisions;        // the recipes it runs natively (bf16, fp8, ...)
  std::string source;
};

// The measurement the default achievable fractions come from: fraction = measured / the
// calibration GPU's datasheet peak.
struct Calibration {
  std::string gpu;
  std::string date;
  std::map<std::string, double> measured_tflops;  // "bf16", "fp8"
  std::map<std::string, std::string> how;         // same keys, plus "memory"
  double measured_tbps = 0;
  std::map<std::string, std::string> unmeasured;  // precision -> measured key it borrows
  std::string unmeasured_basis;
};

struct GpuTable {
  std::string origin;  // the file it was read from
  std::vector<GpuSpec> gpus;
  Calibration calibration;
  double launch_floor_us = 0;
  std::string launch_floor_basis;
};

GpuTable gpu_table_from_json(const json& j, const std::string& where);
GpuTable load_gpu_table(const std::filesystem::path& path);
// UsageError naming every known GPU when `name` is not one of them (exact match).
const GpuSpec& find_gpu(const GpuTable& table, const std::string& name);

struct RooflineOptions {
  std::map<std::string, double> compute_fraction;  // by recipe (bf16, fp8, fp8_block, ...)
  double memory_fraction = 0;
  double launch_floor_s = 0;
};
// Fractions from the table's calibration; launch floor from the table.
RooflineOptions default_roofline_options(const GpuTable& table);

// The peak key a recipe runs at: bf16 -> bf16; fp8, fp8_block, mxfp8 -> fp8; nvfp4 -> fp4.
std::string peak_key(const std::string& recipe);
// Bytes per element of a storage dtype (bf16 2, fp32 4, e4m3/e5m2 1, e2m1 0.5).
double bytes_per_element(const std::string& dtype);
// Scale-factor bytes of one operand with `rows` rows and `k` elements along K per row:
// none 0; scalar_32f 4; vec128_32f 4 per 1x128 block; blk128x128_32f 4 per 128x128 block;
// vec32_ue8m0 1 per 32; vec16_ue4m3 1 per 16 plus a 4-byte per-tensor scale. Partial blocks
// count as whole ones; the swizzle padding some libraries add is not counted.
double scale_bytes(const std::string& scale_mode, std::int64_t rows, std::int64_t k);

struct RooflineResult {
  std::string precision;  // the GEMM precision of the shape
  double flops = 0;
  double bytes = 0;        // total, scale factors included
  double scale_bytes = 0;  // the scale-factor part of `bytes`
  double peak_tflops = 0;
  double compute_fraction = 0, memory_fraction = 0;
  double compute_s = 0, memory_s = 0, launch_s = 0;
  double sol_s = 0;   // max of the three
  std::string bound;  // "compute" | "memory" | "launch"
};

// `shape.params` needs m, n, k and a GEMM precision; the operand fields (a_type, b_type, d_type,
// a_scale, b_scale) default to default_operands(precision) when absent. Throws UsageError when
// the GPU cannot run the precision.
RooflineResult roofline(const Shape& shape, const GpuSpec& gpu, const RooflineOptions& opt);

}  // namespace abh
