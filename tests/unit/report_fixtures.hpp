// Fixtures shared by the report tests (test_report_*.cpp, test_speed_of_light.cpp,
// test_layer_summary.cpp): an in-memory plan and its outcomes, a GPU table with round figures,
// a validator for the subset of JSON Schema that schemas/report.schema.json uses, and checkers
// for the CSV and SVG formats.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model_grid.hpp"
#include "report/report_builder.hpp"
#include "report/report_json.hpp"
#include "report/report_render.hpp"
#include "system/error.hpp"
#include "system/version.hpp"

namespace abh::test {

inline const char* const kAwkwardLabel = "qkv, \"dgrad\" <&> | `x`";

inline Plan make_plan(int shapes, const std::string& schedule = "aba") {
  Plan p;
  p.schema_version = kPlanSchemaVersion;
  p.harness_version = kHarnessVersion;
  p.run_id = "20260101-000000-abcd";
  p.created_at = "2026-01-01T00:00:00Z";
  p.repo = "/tmp/kernels";
  p.plugin_target = "cpu";
  p.command = {"abharness", "run", "--baseline", "main", "--candidate", "WORKTREE"};
  p.worker_sha256 = std::string(64, 'w');
  for (const char* name : {"baseline", "candidate"}) {
    Variant v;
    v.name = name;
    v.source.requested = v.name == "baseline" ? "main" : kWorktree;
    v.source.kind = v.name == "baseline" ? "commit" : "worktree";
    v.source.commit = std::string(40, v.name == "baseline" ? 'a' : 'b');
    v.source.digest = std::string(64, 'd');
    v.plugin_sha256 = std::string(64, v.name == "baseline" ? '1' : '2');
    v.toolchain_id = "g++ 12";
    p.variants.push_back(v);
  }
  for (int i = 0; i < shapes; ++i) {
    Shape s;
    s.id = "m" + std::to_string(128 << i) + "_n4096_k4096";
    s.label = i == 0 ? kAwkwardLabel : "";
    s.params = {{"m", 128 << i}, {"n", 4096}, {"k", 4096}};
    p.shapes.push_back(s);
  }
  p.schedule.name = schedule;
  p.tasks = make_schedule(p.shapes, p.schedule);
  for (auto& t : p.tasks) t.cpus = {7};
  Environment env;
  env.hostname = "host";
  env.os = "Linux 6.1";
  env.cpu_model = "cpu";
  env.gpu = GpuInfo{0, "NVIDIA H200", "GPU-1234", "0000:01:00.0", 9, 0, 132, 60 << 20, 1LL << 37};
  env.driver_version = "580.00";
  env.cuda_runtime_version = "13000";
  env.cupti_version = "26";
  env.libraries = {{"cublasLt", "130100"}};
  p.machine.push_back(env);
  return p;
}

// A valid arm as a report row holds it, for tests that build rows by hand.
inline ArmStats ok_arm(const char* name, const char* variant, double median_ns = 0, int round = 0) {
  ArmStats a;
  a.arm = name;
  a.variant = variant;
  a.round = round;
  a.ok = true;
  a.median_ns = median_ns;
  return a;
}

// A valid result with `n` lognormal samples around `median_ns`.
inline ArmResult make_result(const Plan& p, const Task& t, double median_ns, std::uint64_t seed,
                             std::size_t n = 40) {
  ArmResult r;
  r.schema_version = kResultSchemaVersion;
  r.invocation.shape = t.shape;
  r.invocation.arm = t.arm;
  r.invocation.variant = t.variant;
  r.measurement.timer = "steady";
  Rng rng(seed);
  for (std::size_t i = 0; i < n; ++i)
    r.measurement.samples_ns.push_back(median_ns * std::exp(0.002 * rng.normal()));
  r.measurement.stop_reason = "noise 0.2% <= 0.5% after 40 samples";
  r.measurement.kernel_names = {"gemm_kernel<128, 64>", "splitk_reduce"};
  r.measurement.tactic = "tile=128x64,split=2";
  double m = p.shape(t.shape).params["m"].get<double>();
  r.measurement.flops = 2 * m * 4096 * 4096;
  r.measurement.min_bytes = 2 * (m * 4096 + 4096 * 4096 + m * 4096);
  r.correctness.passed = true;
  r.correctness.tolerance = 1e-2;
  return r;
}

// Shape 0: candidate 10% faster; 1: same (its B arm throttled); 2: candidate 10% slower;
// 3: A2 failed.
inline std::vector<ArmOutcome> make_outcomes(const Plan& p) {
  const double candidate[] = {9000, 10000, 11000, 10000};
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 0;
  for (const Task& t : p.tasks) {
    std::size_t shape = 0;
    while (p.shapes[shape].id != t.shape) ++shape;
    ArmOutcome o;
    o.task = t;
    if (shape == 3 && t.arm == "A2") {
      o.failure = "exit code 3: worker crashed, \"bad\"\nsecond line";
    } else {
      o.result = make_result(p, t, t.variant == "baseline" ? 10000 : candidate[shape % 4], ++seed);
      if (shape == 1 && t.variant == "candidate") {
        o.result->telemetry.throttled = true;
        o.result->telemetry.note = "SW power cap";
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

inline Report sample_report() {
  Plan p = make_plan(4);
  return build_report(p, make_outcomes(p), StatsOptions{}, "sha256:" + std::string(64, 'r'));
}

// --- A JSON Schema subset validator: the keywords schemas/report.schema.json uses. ------------

inline void validate_schema(const json& v, const json& schema, const json& root,
                            const std::string& at, std::vector<std::string>& errors) {
  if (schema.contains("$ref")) {
    std::string ref = schema["$ref"];
    REQUIRE(ref.rfind("#/$defs/", 0) == 0);
    validate_schema(v, root["$defs"][ref.substr(8)], root, at, errors);
  }
  if (schema.contains("anyOf")) {
    bool any = false;
    for (const auto& alt : schema["anyOf"]) {
      std::vector<std::string> e;
      validate_schema(v, alt, root, at, e);
      any = any || e.empty();
    }
    if (!any) errors.push_back(at + ": matches no alternative of anyOf");
  }
  if (schema.contains("const") && v != schema["const"]) errors.push_back(at + ": != const");
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) errors.push_back(at + ": not in enum");
  }
  if (schema.contains("type")) {
    json types = schema["type"].is_array() ? schema["type"] : json::array({schema["type"]});
    bool ok = false;
    for (const auto& t : types) {
      std::string ty = t;
      ok = ok || (ty == "object" && v.is_object()) || (ty == "array" && v.is_array()) ||
           (ty == "string" && v.is_string()) || (ty == "boolean" && v.is_boolean()) ||
           (ty == "null" && v.is_null()) || (ty == "number" && v.is_number()) ||
           (ty == "integer" && v.is_number_integer());
    }
    if (!ok) errors.push_back(at + ": type is " + v.type_name() + ", schema wants " + types.dump());
  }
  if (v.is_number()) {
    double x = v.get<double>();
    if (schema.contains("minimum") && x < schema["minimum"].get<double>())
      errors.push_back(at + ": below minimum");
    if (schema.contains("exclusiveMinimum") && x <= schema["exclusiveMinimum"].get<double>())
      errors.push_back(at + ": not above exclusiveMinimum");
    if (schema.contains("exclusiveMaximum") && x >= schema["exclusiveMaximum"].get<double>())
      errors.push_back(at + ": not below exclusiveMaximum");
  }
  if (v.is_object()) {
    if (schema.contains("required"))
      for (const auto& key : schema["required"])
        if (!v.contains(key.get<std::string>()))
          errors.push_back(at + ": required key '" + key.get<std::string>() + "' is missing");
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (schema.contains("properties") && schema["properties"].contains(it.key())) {
        validate_schema(*it, schema["properties"][it.key()], root, at + "." + it.key(), errors);
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>())
          errors.push_back(at + ": key '" + it.key() + "' is not in the schema");
        else if (extra.is_object())
          validate_schema(*it, extra, root, at + "." + it.key(), errors);
      }
    }
  }
  if (v.is_array() && schema.contains("items"))
    for (std::size_t i = 0; i < v.size(); ++i)
      validate_schema(v[i], schema["items"], root, at + "[" + std::to_string(i) + "]", errors);
}

inline std::vector<std::string> schema_errors(const json& report) {
  json schema =
      read_json_file(std::filesystem::path(ABH_SOURCE_DIR) / "schemas/report.schema.json");
  std::vector<std::string> errors;
  validate_schema(report, schema, schema, "report", errors);
  return errors;
}

// --- Format checkers ---------------------------------------------------------------------------

// RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks.
inline std::vector<std::vector<std::string>> parse_csv(const std::string& s) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string f;
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        f += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        f += c;
      }
    } else if (c == '"') {
      REQUIRE(f.empty());  // a quote only opens a field
      quoted = true;
    } else if (c == ',') {
      row.push_back(f);
      f.clear();
    } else if (c == '\r') {
      REQUIRE(i + 1 < s.size());
      REQUIRE(s[i + 1] == '\n');  // records end with CRLF
      row.push_back(f);
      f.clear();
      rows.push_back(row);
      row.clear();
      ++i;
    } else {
      REQUIRE(c != '\n');  // a bare LF outside quotes is not RFC 4180
      f += c;
    }
  }
  REQUIRE(!quoted);
  REQUIRE(row.empty());
  REQUIRE(f.empty());
  return rows;
}

// The index of a CSV header column; fails the test when there is none.
inline std::size_t csv_column(const std::vector<std::vector<std::string>>& rows,
                              const std::string& name) {
  auto it = std::find(rows.at(0).begin(), rows.at(0).end(), name);
  REQUIRE(it != rows[0].end());
  return static_cast<std::size_t>(it - rows[0].begin());
}

// Minimal XML well-formedness: balanced, properly nested tags; quoted attributes; entities known.
// Returns the element names in document order.
inline std::vector<std::string> check_xml(const std::string& s) {
  std::vector<std::string> stack, elements;
  auto check_text = [](const std::string& text) {
    for (std::size_t i = text.find('&'); i != std::string::npos; i = text.find('&', i + 1)) {
      bool known = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
        known = known || text.compare(i, std::strlen(e), e) == 0;
      CHECK_MESSAGE(known, "unescaped & at " << i);
    }
    CHECK(text.find('<') == std::string::npos);
  };
  std::size_t i = 0;
  int roots = 0;
  while (i < s.size()) {
    std::size_t lt = s.find('<', i);
    check_text(s.substr(i, lt == std::string::npos ? std::string::npos : lt - i));
    if (lt == std::string::npos) break;
    std::size_t gt = s.find('>', lt);
    REQUIRE(gt != std::string::npos);
    std::string tag = s.substr(lt + 1, gt - lt - 1);
    i = gt + 1;
    if (tag.front() == '?') continue;  // the XML declaration
    if (tag.front() == '/') {
      REQUIRE(!stack.empty());
      CHECK(stack.back() == tag.substr(1));
      stack.pop_back();
      continue;
    }
    bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
    elements.push_back(name);
    if (stack.empty()) ++roots;
    // Attributes: name="value" pairs with no raw '<' or '"' inside a value.
    std::string attrs = tag.substr(name.size());
    std::size_t quotes = std::count(attrs.begin(), attrs.end(), '"');
    CHECK(quotes % 2 == 0);
    check_text(attrs);
    if (!self_closing) stack.push_back(name);
  }
  CHECK(stack.empty());
  CHECK(roots == 1);
  return elements;
}

inline std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t i = haystack.find(needle); i != std::string::npos;
       i = haystack.find(needle, i + 1))
    ++n;
  return n;
}

inline std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Round figures so the expected times can be worked out by hand: bf16 peak 1000 TFLOP/s at a
// measured 800 (fraction 0.8), memory 4 TB/s at a measured 3.6 (0.9), launch floor 3 us.
inline GpuTable test_gpu_table() {
  json j = json::parse(R"({
    "schema_version": 1,
    "gpus": [{"name": "NVIDIA H200", "source": "test figures",
              "peak_tflops": {"bf16": 1000, "fp8": 2000}, "memory_tbps": 4,
              "precisions": ["bf16", "fp8", "fp8_block"]}],
    "calibration": {"gpu": "NVIDIA H200", "date": "2026-01-01",
      "compute": {"bf16": {"measured_tflops": 800, "how": "test"},
                  "fp8": {"measured_tflops": 1400, "how": "test"}},
      "memory": {"measured_tbps": 3.6, "how": "test"},
      "unmeasured_precisions": {"fp8_block": "fp8", "mxfp8": "fp8", "nvfp4": "fp8"},
      "unmeasured_basis": "test"},
    "launch_floor_us": {"value": 3, "basis": "test"}})");
  return gpu_table_from_json(j, "test-gpus.json");
}

// Every sample of an arm equal to `ns`, so medians and means are exact.
inline std::vector<ArmOutcome> constant_outcomes(const Plan& p,
                                                 double (*time)(const Shape&, const Task&)) {
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 0;
  for (const Task& t : p.tasks) {
    ArmOutcome o;
    o.task = t;
    double ns = time(p.shape(t.shape), t);
    if (ns > 0) {
      o.result = make_result(p, t, ns, ++seed);
      for (auto& x : o.result->measurement.samples_ns) x = ns;
    } else {
      o.failure = "exit code 3: worker crashed";
    }
    out.push_back(std::move(o));
  }
  return out;
}

// to_json(r) satisfies the schema, reads back to the same report and renders as the same text.
inline void check_round_trip(const Report& r) {
  json j = to_json(r);
  auto errors = schema_errors(j);
  for (const auto& e : errors) MESSAGE(e);
  CHECK(errors.empty());
  Report back = report_from_json(j, "report.json");
  CHECK(to_json(back) == j);
  CHECK(back.shapes == r.shapes);
  CHECK(back.summary == r.summary);
  CHECK(back.stats == r.stats);
  CHECK(back.sol == r.sol);
  CHECK(back.layer == r.layer);
  // The rendered text parses back to the same document (doubles survive the text form).
  CHECK(json::parse(render(r, "json", {})) == j);
}

// One shape A1/B/A2 of one kernel (1.5 M cycles, compute-bound) whose arms ran at the given
// clocks, each sample's clock wandering 3 % around its arm's: what an H200 at its power cap does.
inline std::vector<ArmOutcome> clocked_outcomes(const Plan& p, const double (&arm_mhz)[3],
                                                double cycles_b = 1.5e6,
                                                bool compute_bound = true) {
  std::vector<ArmOutcome> out;
  std::uint64_t seed = 40;
  int i = 0;
  for (const Task& t : p.tasks) {
    ArmOutcome o;
    o.task = t;
    ArmResult r = make_result(p, t, 1, ++seed, 0);
    Rng rng(seed);
    const double cycles = t.variant == "baseline" ? 1.5e6 : cycles_b;
    for (int k = 0; k < 400; ++k) {
      const double f = arm_mhz[i] * std::exp(0.03 * rng.normal());
      const double ns = compute_bound ? cycles / f * 1e3 : cycles / 1500 * 1e3;
      r.measurement.samples_ns.push_back(ns * std::exp(0.002 * rng.normal()));
      r.measurement.clock.sample_mhz.push_back(f);
    }
    r.measurement.timer = "cupti";
    o.result = r;
    out.push_back(std::move(o));
    ++i;
  }
  return out;
}

// clocked_outcomes of a one-shape ABA plan whose B arm is from before clocks were recorded: it
// has no clock readings, so the shape cannot be compared at one clock.
inline std::vector<ArmOutcome> outcomes_with_unclocked_b(const Plan& p) {
  const double mhz[3] = {1500, 1450, 1425};
  auto out = clocked_outcomes(p, mhz);
  out[1].result->measurement.clock.sample_mhz.clear();
  return out;
}

}  // namespace abh::test
