#include "stats/roofline.hpp"

#include <algorithm>

#include "model/model_grid.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

double positive_number(const json& obj, const char* key, const std::string& where) {
  double v = field<double>(obj, key, where);
  if (!(v > 0)) throw Error(where + ": field '" + key + "': must be a positive number");
  return v;
}

GpuSpec gpu_from_json(const json& j, const std::string& where) {
  GpuSpec g;
  g.name = field<std::string>(j, "name", where);
  g.form_factor = field_or<std::string>(j, "form_factor", where, "");
  g.source = field<std::string>(j, "source", where);
  if (g.source.empty()) throw Error(where + ": field 'source': every figure needs its source");
  const json& peaks = object_field(j, "peak_tflops", where);
  for (const auto& [key, value] : peaks.items()) {
    if (key != "bf16" && key != "fp8" && key != "fp4")
      throw Error(where + ": peak_tflops: unknown key '" + key + "' (use bf16, fp8, fp4)");
    g.peak_tflops[key] = positive_number(peaks, key.c_str(), where + ": peak_tflops");
  }
  g.memory_tbps = positive_number(j, "memory_tbps", where);
  g.precisions = string_array(j, "precisions", where);
  for (const auto& p : g.precisions) {
    try {
      check_precision(p);
    } catch (const Error& e) {
      throw Error(where + ": field 'precisions': " + e.what());
    }
    if (!g.peak_tflops.count(peak_key(p)))
      throw Error(where + ": lists precision '" + p + "' but has no peak_tflops." + peak_key(p));
  }
  return g;
}

}  // namespace

std::string peak_key(const std::string& recipe) {
  check_precision(recipe);
  if (recipe == "bf16") return "bf16";
  if (recipe == "nvfp4") return "fp4";
  return "fp8";
}

double bytes_per_element(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32") return 4;
  if (dtype == "e4m3" || dtype == "e5m2") return 1;
  if (dtype == "e2m1") return 0.5;
  throw UsageError("unknown dtype '" + dtype + "': use bf16, fp16, fp32, e4m3, e5m2 or e2m1");
}

double scale_bytes(const std::string& mode, std::int64_t rows, std::int64_t k) {
  if (mode == "none") return 0;
  if (mode == "scalar_32f") return 4;
  if (mode == "vec128_32f") return 4.0 * double(rows) * double(ceil_div(k, 128));
  if (mode == "blk128x128_32f") return 4.0 * double(ceil_div(rows, 128)) * double(ceil_div(k, 128));
  if (mode == "vec32_ue8m0") return double(rows) * double(ceil_div(k, 32));
  if (mode == "vec16_ue4m3") return double(rows) * double(ceil_div(k, 16)) + 4.0;
  throw UsageError("unknown scale mode '" + mode +
                   "': use none, scalar_32f, vec128_32f, blk128x128_32f, vec32_ue8m0 or "
                   "vec16_ue4m3");
}

GpuTable gpu_table_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  schema_version(j, where, 1, "GPU table");
  GpuTable t;
  t.origin = where;
  auto it = j.find("gpus");
  if (it == j.end() || !it->is_array() || it->empty())
    throw Error(where + ": field 'gpus': expected a non-empty array");
  for (size_t i = 0; i < it->size(); ++i) {
    std::string w = where + ": gpus[" + std::to_string(i) + "]";
    require_object((*it)[i], w);
    GpuSpec g = gpu_from_json((*it)[i], w);
    for (const auto& other : t.gpus)
      if (other.name == g.name) throw Error(w + ": duplicate GPU name '" + g.name + "'");
    t.gpus.push_back(std::move(g));
  }

  const std::string cw = where + ": calibration";
  const json& cal = object_field(j, "calibration", where);
  Calibration& c = t.calibration;
  c.gpu = field<std::string>(cal, "gpu", cw);
  c.date = field<std::string>(cal, "date", cw);
  const json& compute = object_field(cal, "compute", cw);
  for (const auto& [key, entry] : compute.items()) {
    std::string ew = cw + ": compute." + key;
    require_object(entry, ew);
    c.measured_tflops[key] = positive_number(entry, "measured_tflops", ew);
    c.how[key] = field<std::string>(entry, "how", ew);
  }
  const json& memory = object_field(cal, "memory", cw);
  c.measured_tbps = positive_number(memory, "measured_tbps", cw + ": memory");
  c.how["memory"] = field<std::string>(memory, "how", cw + ": memory");
  const json& unmeasured = object_field(cal, "unmeasured_precisions", cw);
  for (const auto& [key, value] : unmeasured.items())
    c.unmeasured[key] = field<std::string>(unmeasured, key.c_str(), cw + ": unmeasured_precisions");
  c.unmeasured_basis = field<std::string>(cal, "unmeasured_basis", cw);

  // Every precision must resolve to a measurement on a GPU of the table, so a default fraction is
  // never made up.
  const GpuSpec* cal_gpu = nullptr;
  for (const auto& g : t.gpus)
    if (g.name == c.gpu) cal_gpu = &g;
  if (!cal_gpu) throw Error(cw + ": field 'gpu': '" + c.gpu + "' is not in the table's gpus");
  for (const auto& p : known_precisions()) {
    std::string key =
        c.measured_tflops.count(p) ? p : (c.unmeasured.count(p) ? c.unmeasured[p] : "");
    if (key.empty() || !c.measured_tflops.count(key))
      throw Error(cw + ": precision '" + p +
                  "' has neither a measurement under 'compute' nor an entry in "
                  "'unmeasured_precisions' naming one");
    if (!cal_gpu->peak_tflops.count(peak_key(key)))
      throw Error(cw + ": the calibration GPU has no peak for '" + key + "'");
    if (c.measured_tflops[key] > cal_gpu->peak_tflops.at(peak_key(key)))
      throw Error(cw + ": compute." + key + " measured above the datasheet peak");
  }
  if (c.measured_tbps > cal_gpu->memory_tbps)
    throw Error(cw + ": memory measured above the datasheet bandwidth");

  const json& launch = object_field(j, "launch_floor_us", where);
  t.launch_floor_us = positive_number(launch, "value", where + ": launch_floor_us");
  t.launch_floor_basis = field<std::string>(launch, "basis", where + ": launch_floor_us");
  return t;
}

GpuTable load_gpu_table(const fs::path& path) {
  try {
    return gpu_table_from_json(read_json_file(path, JsonLimits{1u << 20, 8}), path.string());
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string("GPU table: ") + e.what());
  }
}

const GpuSpec& find_gpu(const GpuTable& table, const std::string& name) {
  for (const auto& g : table.gpus)
    if (g.name == name) return g;
  std::string known;
  for (const auto& g : table.gpus) known += "\n  \"" + g.name + "\"";
  const std::string what =
      name.empty() ? std::string("no GPU given (--gpu NAME)") : "unknown GPU '" + name + "'";
  throw UsageError(what + " (names must match nvidia-smi exactly); " + table.origin +
                   " knows:" + known +
                   "\nAdd an entry with its datasheet figures and source to use another GPU");
}

RooflineOptions default_roofline_options(const GpuTable& table) {
  const Calibration& c = table.calibration;
  const GpuSpec& cal_gpu = find_gpu(table, c.gpu);
  RooflineOptions o;
  for (const auto& p : known_precisions()) {
    const std::string key = c.measured_tflops.count(p) ? p : c.unmeasured.at(p);
    o.compute_fraction[p] = c.measured_tflops.at(key) / cal_gpu.peak_tflops.at(peak_key(key));
  }
  o.memory_fraction = c.measured_tbps / cal_gpu.memory_tbps;
  o.launch_floor_s = table.launch_floor_us * 1e-6;
  return o;
}

RooflineResult roofline(const Shape& shape, const GpuSpec& gpu, const RooflineOptions& opt) {
  const std::string where = "shape '" + shape.id + "'";
  const json& p = shape.params;
  require_object(p, where + ": params");
  auto dim = [&](const char* key) {
    auto v = field<std::int64_t>(p, key, where + ": params");
    if (v <= 0) throw UsageError(where + ": params." + key + " must be positive");
    return v;
  };
  const std::int64_t m = dim("m"), n = dim("n"), k = dim("k");
  if (!p.contains("precision"))
    throw UsageError(where +
                     ": params has no 'precision': regenerate the grid with --precision "
                     "or pass --precision to roofline");
  RooflineResult r;
  r.precision = field<std::string>(p, "precision", where + ": params");
  try {
    check_gemm_precision(r.precision);
  } catch (const Error& e) {
    throw UsageError(where + ": " + e.what());
  }
  const std::string recipe = recipe_of(r.precision);
  if (std::find(gpu.precisions.begin(), gpu.precisions.end(), recipe) == gpu.precisions.end()) {
    throw UsageError(where + ": " + gpu.name + " does not run " + r.precision +
                     " natively (it runs " + join(gpu.precisions, ", ") + ")");
  }
  const GemmOperands defaults = default_operands(r.precision);
  auto str = [&](const char* key, const std::string& fallback) {
    return field_or<std::string>(p, key, where + ": params", fallback);
  };
  const std::string a_dtype = str("a_type", defaults.a_type);
  const std::string b_dtype = str("b_type", defaults.b_type);
  const std::string d_dtype = str("d_type", defaults.d_type);
  const std::string a_scale = str("a_scale", defaults.a_scale);
  const std::string b_scale = str("b_scale", defaults.b_scale);

  const double dm = double(m), dn = double(n), dk = double(k);
  r.flops = 2.0 * dm * dn * dk;
  // A is M x K and B is K x N; both are scaled along K, so B's scale rows are its N columns.
  r.scale_bytes = scale_bytes(a_scale, m, k) + scale_bytes(b_scale, n, k);
  r.bytes = dm * dk * bytes_per_element(a_dtype) + dk * dn * bytes_per_element(b_dtype) +
            dm * dn * bytes_per_element(d_dtype) + r.scale_bytes;

  auto frac = opt.compute_fraction.find(recipe);
  if (frac == opt.compute_fraction.end())
    throw Error("roofline options have no compute fraction for " + recipe);
  r.compute_fraction = frac->second;
  r.memory_fraction = opt.memory_fraction;
  if (!(r.compute_fraction > 0 && r.compute_fraction <= 1) ||
      !(r.memory_fraction > 0 && r.memory_fraction <= 1) || !(opt.launch_floor_s >= 0))
    throw UsageError("achievable fractions must be in (0, 1] and the launch floor >= 0");
  r.peak_tflops = gpu.peak_tflops.at(peak_key(recipe));  // checked by the table loader
  r.compute_s = r.flops / (r.peak_tflops * 1e12 * r.compute_fraction);
  r.memory_s = r.bytes / (gpu.memory_tbps * 1e12 * r.memory_fraction);
  r.launch_s = opt.launch_floor_s;
  r.sol_s = r.compute_s;
  r.bound = "compute";
  if (r.memory_s > r.sol_s) r.sol_s = r.memory_s, r.bound = "memory";
  if (r.launch_s > r.sol_s) r.sol_s = r.launch_s, r.bound = "launch";
  return r;
}

}  // namespace abh
