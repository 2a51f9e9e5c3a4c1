// Reports built from an in-memory plan and outcomes, rendered in every format and checked for
// structure: JSON round trip and schema, one CSV row and one SVG bar per shape, well-formed XML,
// Markdown summary before the table, provenance folded, colour only when asked.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "system/error.hpp"
#include "model/model_grid.hpp"
#include "report/report.hpp"
#include "report/report_render.hpp"
#include "system/version.hpp"

using namespace abh;

namespace {

const char* const kAwkwardLabel = "qkv, \"dgrad\" <&> | `x`";

Plan make_plan(int shapes, const std::string& schedule = "aba") {
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

// A valid result with `n` lognormal samples around `median_ns`.
ArmResult make_result(const Plan& p, const Task& t, double median_ns, std::uint64_t seed,
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
std::vector<ArmOutcome> make_outcomes(const Plan& p) {
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

Report sample_report() {
  Plan p = make_plan(4);
  return build_report(p, make_outcomes(p), StatsOptions{}, "sha256:" + std::string(64, 'r'));
}

// --- A JSON Schema subset validator: the keywords schemas/report.schema.json uses. ------------

void validate_schema(const json& v, const json& schema, const json& root, const std::string& at,
                     std::vector<std::string>& errors) {
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

std::vector<std::string> schema_errors(const json& report) {
  json schema =
      read_json_file(std::filesystem::path(ABH_SOURCE_DIR) / "schemas/report.schema.json");
  std::vector<std::string> errors;
  validate_schema(report, schema, schema, "report", errors);
  return errors;
}

// --- Format checkers ---------------------------------------------------------------------------

// RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& s) {
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
std::size_t csv_column(const std::vector<std::vector<std::string>>& rows, const std::string& name) {
  auto it = std::find(rows.at(0).begin(), rows.at(0).end(), name);
  REQUIRE(it != rows[0].end());
  return static_cast<std::size_t>(it - rows[0].begin());
}

// Minimal XML well-formedness: balanced, properly nested tags; quoted attributes; entities known.
// Returns the element names in document order.
std::vector<std::string> check_xml(const std::string& s) {
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

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t i = haystack.find(needle); i != std::string::npos;
       i = haystack.find(needle, i + 1))
    ++n;
  return n;
}

std::size_t display_width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

TEST_CASE("report: per-shape speedups, verdicts and failed shapes") {
  Report r = sample_report();
  REQUIRE(r.shapes.size() == 4);
  const ShapeRow &fast = r.shapes[0], &same = r.shapes[1], &slow = r.shapes[2],
                 &failed = r.shapes[3];
  CHECK(fast.verdict == Verdict::faster);
  CHECK(*fast.speedup == doctest::Approx(10000.0 / 9000).epsilon(0.005));
  CHECK(fast.ci->lo < *fast.speedup);
  CHECK(fast.ci->hi > *fast.speedup);
  CHECK(*fast.drift == doctest::Approx(1).epsilon(0.005));
  CHECK(fast.label == kAwkwardLabel);
  CHECK(same.verdict == Verdict::same);
  CHECK(same.throttled_arms == std::vector<std::string>{"B"});
  CHECK(slow.verdict == Verdict::slower);
  CHECK(failed.verdict == Verdict::failed);
  CHECK(!failed.speedup);
  CHECK(!failed.ci);
  CHECK(failed.failure.find("A2: exit code 3") != std::string::npos);

  // Per-arm figures.
  const ArmStats& a1 = fast.arms[0];
  CHECK(a1.arm == "A1");
  CHECK(a1.ok);
  CHECK(a1.samples == 40);
  CHECK(a1.median_ns == doctest::Approx(10000).epsilon(0.005));
  CHECK(a1.min_ns <= a1.median_ns);
  CHECK(a1.noise == doctest::Approx(0.002).epsilon(0.5));
  CHECK(a1.kernel_names.size() == 2);
  CHECK(a1.tactic == "tile=128x64,split=2");
  // 2 * 128 * 4096^2 flops in ~10 us = ~0.43 TFLOP/s.
  CHECK(*a1.tflops == doctest::Approx(2.0 * 128 * 4096 * 4096 / a1.median_ns / 1e3));
  CHECK(*a1.gbps > 0);
  CHECK(!failed.arms[2].ok);
  CHECK(failed.arms[2].arm == "A2");

  // Summary: the failed shape is out of every aggregate.
  const Summary& s = r.summary;
  CHECK(s.shapes_total == 4);
  CHECK(s.shapes_compared == 3);
  CHECK(s.shapes_failed == 1);
  CHECK(s.shapes_throttled == 1);
  CHECK(s.improved == 1);
  CHECK(s.regressed == 1);
  CHECK(s.verdicts.at("same") == 1);
  CHECK(s.verdicts.at("unstable") == 0);
  CHECK(*s.geomean ==
        doctest::Approx(std::cbrt(*fast.speedup * *same.speedup * *slow.speedup)).epsilon(1e-12));
  CHECK(*s.summed_time_ratio ==
        doctest::Approx((*fast.baseline_ns + *same.baseline_ns + *slow.baseline_ns) /
                        (*fast.candidate_ns + *same.candidate_ns + *slow.candidate_ns)));
  CHECK(s.min_speedup->shape == slow.shape);
  CHECK(s.max_speedup->shape == fast.shape);
  CHECK(count_regressions(r) == 1);

  // Provenance comes from the plan and the caller.
  CHECK(r.provenance.result_set_digest == "sha256:" + std::string(64, 'r'));
  CHECK(r.provenance.variants.size() == 2);
  CHECK(r.provenance.variants[1].requested == kWorktree);
  CHECK(r.provenance.machine[0].gpu->uuid == "GPU-1234");
  CHECK(r.provenance.command.size() == 6);
}

TEST_CASE("report: missing, unplanned, duplicate and wrong-output arms") {
  Plan p = make_plan(2);
  auto outcomes = make_outcomes(p);

  auto missing = outcomes;
  missing.pop_back();  // the last shape's A2
  Report r = build_report(p, missing, {}, "d");
  CHECK(r.shapes[1].verdict == Verdict::failed);
  CHECK(r.shapes[1].failure.find("no outcome") != std::string::npos);
  CHECK(r.summary.shapes_compared == 1);

  auto wrong = outcomes;
  wrong[0].result->correctness.passed = false;
  r = build_report(p, wrong, {}, "d");
  CHECK(r.shapes[0].verdict == Verdict::failed);
  CHECK(r.shapes[0].failure.find("output verification failed") != std::string::npos);

  auto unplanned = outcomes;
  unplanned[0].task.arm = "A9";
  CHECK_THROWS_AS(build_report(p, unplanned, {}, "d"), Error);
  auto duplicate = outcomes;
  duplicate.push_back(outcomes[0]);
  CHECK_THROWS_AS(build_report(p, duplicate, {}, "d"), Error);

  // Nothing comparable: no aggregates, and every format still renders.
  std::vector<ArmOutcome> none;
  r = build_report(p, none, {}, "d");
  CHECK(r.summary.shapes_compared == 0);
  CHECK(!r.summary.geomean);
  CHECK(schema_errors(to_json(r)).empty());
  for (const auto& f : report_formats()) CHECK(!render(r, f, {}).empty());
  CHECK(report_from_json(to_json(r), "none").summary == r.summary);
}

TEST_CASE("report: ABBA averages both B arms, a single A arm has no drift") {
  Plan p = make_plan(1, "abba");
  auto outcomes = make_outcomes(p);
  Report r = build_report(p, outcomes, {}, "d");
  const ShapeRow& row = r.shapes[0];
  REQUIRE(row.arms.size() == 4);
  CHECK(row.arms[1].arm == "B1");
  CHECK(row.arms[2].arm == "B2");
  double a = (row.arms[0].median_ns + row.arms[3].median_ns) / 2;
  double b = (row.arms[1].median_ns + row.arms[2].median_ns) / 2;
  CHECK(*row.speedup == doctest::Approx(a / b).epsilon(1e-12));
  CHECK(*row.drift == doctest::Approx(row.arms[3].median_ns / row.arms[0].median_ns));

  Plan q = make_plan(1, "random");  // one block: AB or BA
  r = build_report(q, make_outcomes(q), {}, "d");
  CHECK(r.shapes[0].speedup);
  CHECK(!r.shapes[0].drift);
  CHECK(r.shapes[0].verdict == Verdict::faster);
}

TEST_CASE("report: JSON round-trips and satisfies the schema") {
  Report r = sample_report();
  json j = to_json(r);
  auto errors = schema_errors(j);
  for (const auto& e : errors) MESSAGE(e);
  CHECK(errors.empty());
  // The validator itself notices a missing required key and a wrong type.
  json broken = j;
  broken["shapes"][0].erase("drift");
  broken["summary"]["improved"] = "one";
  CHECK(schema_errors(broken).size() == 2);

  Report back = report_from_json(j, "report.json");
  CHECK(to_json(back) == j);
  CHECK(back.shapes == r.shapes);
  CHECK(back.summary == r.summary);
  CHECK(back.stats == r.stats);
  // The rendered text parses back to the same document (doubles survive the text form).
  CHECK(json::parse(render(r, "json", {})) == j);

  json wrong_version = j;
  wrong_version["schema_version"] = 99;
  CHECK_THROWS_AS(report_from_json(wrong_version, "report.json"), Error);
  json no_summary = j;
  no_summary.erase("summary");
  CHECK_THROWS_WITH_AS(report_from_json(no_summary, "report.json"), doctest::Contains("summary"),
                       Error);
  json bad_verdict = j;
  bad_verdict["shapes"][0]["verdict"] = "better";
  CHECK_THROWS_WITH_AS(report_from_json(bad_verdict, "report.json"), doctest::Contains("shapes[0]"),
                       Error);
}

TEST_CASE("report: formats are registered and rendering is deterministic") {
  CHECK(report_formats() == std::vector<std::string>{"terminal", "markdown", "json", "csv", "svg"});
  CHECK(report_format("markdown").extension == "md");
  CHECK_THROWS_AS(render(sample_report(), "html", {}), UsageError);
  Report a = sample_report(), b = sample_report();
  for (const auto& f : report_formats()) CHECK(render(a, f, {}) == render(b, f, {}));
}

TEST_CASE("report: CSV has a header and one RFC 4180 row per shape") {
  Report r = sample_report();
  auto rows = parse_csv(render(r, "csv", {}));
  REQUIRE(rows.size() == r.shapes.size() + 1);
  for (const auto& row : rows) CHECK(row.size() == rows[0].size());
  CHECK(rows[0][0] == "shape");
  CHECK(rows[1][1] == kAwkwardLabel);  // comma, quotes survive quoting
  CHECK(rows[4][2] == "failed");
  CHECK(rows[4][3].empty());  // no speedup for a failed shape
  CHECK(rows[4][10].find("second line") != std::string::npos);
  CHECK(std::stod(rows[1][3]) == *r.shapes[0].speedup);  // full precision
}

TEST_CASE("report: SVG is well-formed with one bar per compared shape") {
  Report r = sample_report();
  std::string svg = render(r, "svg", {});
  auto elements = check_xml(svg);
  CHECK(elements.front() == "svg");
  CHECK(count(svg, "class=\"bar\"") == 3);  // the failed shape has none
  CHECK(count(svg, "class=\"ci\"") == 3);
  CHECK(count(svg, "class=\"drift\"") == 3);
  CHECK(count(svg, "class=\"reference\"") == 1);
  CHECK(count(svg, "class=\"noise-band\"") == 1);
  CHECK(count(svg, "class=\"failed\"") == 1);
  CHECK(svg.find("&lt;&amp;&gt;") != std::string::npos);  // the awkward label, escaped

  // A real XML parser agrees, where one is installed.
  if (std::system("python3 -c 'import xml.dom.minidom' >/dev/null 2>&1") == 0) {
    auto path = std::filesystem::temp_directory_path() /
                ("abh-report-" + std::to_string(::getpid()) + ".svg");
    std::ofstream(path) << svg;
    int rc = std::system(
        ("python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
         path.string())
            .c_str());
    std::filesystem::remove(path);
    CHECK(rc == 0);
  } else {
    MESSAGE("python3 xml.dom.minidom not available: only the built-in XML check ran");
  }
}

TEST_CASE("report: Markdown puts the summary first and folds provenance") {
  Report r = sample_report();
  std::string md = render(r, "markdown", {});
  auto summary = md.find("**Geomean speedup"), table = md.find("| shape |"),
       details = md.find("<details><summary>Provenance</summary>");
  REQUIRE(summary != std::string::npos);
  REQUIRE(table != std::string::npos);
  REQUIRE(details != std::string::npos);
  CHECK(summary < table);
  CHECK(table < details);
  CHECK(count(md, "<details>") == count(md, "</details>"));
  CHECK(md.find("Failed, left out of every aggregate") != std::string::npos);
  CHECK(md.find(r.provenance.result_set_digest) != std::string::npos);
  CHECK(md.find("GPU-1234") != std::string::npos);
  // The awkward label cannot break the table: its '|' is escaped.
  CHECK(md.find("\\|") != std::string::npos);
  // Every per-shape table row has the header's number of cells.
  std::size_t header_cells = 0;
  std::istringstream lines(md.substr(table));
  std::string line;
  std::getline(lines, line);
  auto cells = [](const std::string& l) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < l.size(); ++i) n += l[i] == '|' && (i == 0 || l[i - 1] != '\\');
    return n;
  };
  header_cells = cells(line);
  for (std::size_t i = 0; i < r.shapes.size() + 1 && std::getline(lines, line); ++i)
    CHECK(cells(line) == header_cells);
}

TEST_CASE("report: terminal table aligns columns and colours only when asked") {
  Report r = sample_report();
  std::string plain = render(r, "terminal", {});
  CHECK(plain.find('\x1b') == std::string::npos);
  std::string colour = render(r, "terminal", RenderOptions{true});
  CHECK(colour.find("\x1b[32m") != std::string::npos);  // faster in green
  CHECK(colour.find("\x1b[31m") != std::string::npos);  // slower in red
  CHECK(plain.find("geomean speedup") != std::string::npos);
  CHECK(plain.find("summed-time ratio") != std::string::npos);
  CHECK(plain.find("failed shapes") != std::string::npos);
  CHECK(plain.find("throttled: " + r.shapes[1].shape) != std::string::npos);

  // The speedup column is right-aligned: every row's ratio ends where the header does.
  std::istringstream lines(plain);
  std::string line;
  std::size_t header_end = std::string::npos;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("shape ", 0) == 0) {
      header_end = display_width(line.substr(0, line.find("speedup") + 7));
      continue;
    }
    if (header_end == std::string::npos) continue;
    for (const auto& row : r.shapes) {
      if (line.rfind(row.shape + " ", 0) != 0 || !row.speedup) continue;
      std::string ratio = fmt::ratio(*row.speedup);
      CHECK(display_width(line.substr(0, line.find(ratio) + ratio.size())) == header_end);
      ++rows;
    }
  }
  CHECK(rows == 3);
}

TEST_CASE("report: unit formatting is auto-scaled and locale-free") {
  CHECK(fmt::duration(812.34) == "812.3 ns");
  CHECK(fmt::duration(1234.6) == "1.235 \u00b5s");
  CHECK(fmt::duration(999.96) == "1.000 \u00b5s");  // rounding carries into the next unit
  CHECK(fmt::duration(12.5e6) == "12.50 ms");
  CHECK(fmt::duration(3.2e9) == "3.200 s");
  CHECK(fmt::drift(1.0012) == "+0.12%");
  CHECK(fmt::drift(0.99) == "-1.00%");
  CHECK(fmt::drift(0.99999) == "+0.00%");
  CHECK(fmt::confidence_label(0.95) == "95% CI");
  CHECK(fmt::confidence_label(0.995) == "99.5% CI");
}

// --- Speed of light and the per-layer summary -------------------------------------------------

namespace {

// Round figures so the expected times can be worked out by hand: bf16 peak 1000 TFLOP/s at a
// measured 800 (fraction 0.8), memory 4 TB/s at a measured 3.6 (0.9), launch floor 3 us.
GpuTable test_gpu_table() {
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
std::vector<ArmOutcome> constant_outcomes(const Plan& p,
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

void check_round_trip(const Report& r) {
  json j = to_json(r);
  auto errors = schema_errors(j);
  for (const auto& e : errors) MESSAGE(e);
  CHECK(errors.empty());
  Report back = report_from_json(j, "report.json");
  CHECK(to_json(back) == j);
  CHECK(back.shapes == r.shapes);
  CHECK(back.sol == r.sol);
  CHECK(back.layer == r.layer);
  CHECK(json::parse(render(r, "json", {})) == j);
}

}  // namespace

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

TEST_CASE("report: per-layer summary of a model grid sums each precision and compares to bf16") {
  ModelConfig c;
  c.name = "tiny";
  c.source = "test";
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 64;
  c.gated_mlp = true;
  Plan p = make_plan(0);
  for (const char* recipe : {"bf16", "fp8"})
    for (auto& s : model_gemms(c, recipe, 128, 1)) p.shapes.push_back(s);
  p.shapes.push_back(explicit_gemm(64, 64, 64, ""));  // not a model GEMM: in no sum
  p.tasks = make_schedule(p.shapes, p.schedule);
  REQUIRE(p.shapes.size() == 25);

  // bf16 GEMMs: baseline 10 us, candidate 8 us; fp8: 6 us and 5 us.
  auto times = [](const Shape& s, const Task& t) {
    bool fp8 = s.params.value("precision", "") == "fp8";
    if (t.variant == "baseline") return fp8 ? 6000.0 : 10000.0;
    return fp8 ? 5000.0 : 8000.0;
  };
  GpuTable table = test_gpu_table();
  Report r = build_report(p, constant_outcomes(p, times), {}, "d", RooflineContext{&table, ""});
  REQUIRE(r.layer);
  CHECK(r.layer->other_shapes == 1);
  REQUIRE(r.layer->precisions.size() == 2);
  const PrecisionSum &bf16 = r.layer->precisions[0], &fp8 = r.layer->precisions[1];
  CHECK(bf16.precision == "bf16");
  CHECK(bf16.gemms == 12);
  CHECK(bf16.missing.empty());
  CHECK(*bf16.baseline_ns == doctest::Approx(120000).epsilon(1e-12));
  CHECK(*bf16.candidate_ns == doctest::Approx(96000).epsilon(1e-12));
  CHECK(*bf16.baseline_vs_bf16 == 1);
  CHECK(fp8.precision == "fp8");
  CHECK(fp8.gemms == 12);
  CHECK(*fp8.baseline_ns == doctest::Approx(72000).epsilon(1e-12));
  CHECK(*fp8.baseline_vs_bf16 == doctest::Approx(0.6).epsilon(1e-12));
  CHECK(*fp8.candidate_vs_bf16 == doctest::Approx(60000.0 / 96000).epsilon(1e-12));
  // Every GEMM runs on the H200 of the table, so the layer has a summed speed of light.
  double sol = 0;
  for (std::size_t i = 12; i < 24; ++i) sol += *r.shapes[i].sol_ns;
  CHECK(*fp8.sol_ns == doctest::Approx(sol).epsilon(1e-12));
  std::string md = render(r, "markdown", {});
  auto shape_table = md.find("| shape |"), layer = md.find("**Per-layer summary**");
  REQUIRE(layer != std::string::npos);
  CHECK(shape_table < layer);
  CHECK(md.find("| fp8 | 12 | 72.00 \u00b5s | 60.00 \u00b5s | 0.6000x | 0.6250x |") !=
        std::string::npos);
  CHECK(render(r, "terminal", {}).find("per-layer GEMMs") != std::string::npos);
  check_round_trip(r);

  // One fp8 GEMM failed: its sums are partial, it is listed, and no ratio compares them to bf16.
  auto with_failure = [](const Shape& s, const Task& t) {
    bool fp8 = s.params.value("precision", "") == "fp8";
    if (fp8 && s.label == "fc2 wgrad" && t.arm == "B") return 0.0;
    if (t.variant == "baseline") return fp8 ? 6000.0 : 10000.0;
    return fp8 ? 5000.0 : 8000.0;
  };
  r = build_report(p, constant_outcomes(p, with_failure), {}, "d");
  const PrecisionSum& partial = r.layer->precisions[1];
  CHECK(partial.gemms == 12);
  REQUIRE(partial.missing.size() == 1);
  CHECK(partial.missing[0].rfind("fc2_wgrad_", 0) == 0);
  CHECK(*partial.baseline_ns == doctest::Approx(66000).epsilon(1e-12));
  CHECK(*partial.candidate_ns == doctest::Approx(55000).epsilon(1e-12));
  CHECK(!partial.baseline_vs_bf16);
  CHECK(!partial.candidate_vs_bf16);
  CHECK(!partial.sol_ns);  // no table given
  CHECK(*r.layer->precisions[0].baseline_vs_bf16 == 1);
  md = render(r, "markdown", {});
  CHECK(md.find("fp8 sums are partial; missing (failed): `" + partial.missing[0] + "`") !=
        std::string::npos);
  CHECK(md.find("66.00 \u00b5s (partial)") != std::string::npos);
  check_round_trip(r);
}

namespace {
// One shape A1/B/A2 of one kernel (1.5 M cycles, compute-bound) whose arms ran at the given
// clocks, each sample's clock wandering 3 % around its arm's: what an H200 at its power cap does.
std::vector<ArmOutcome> clocked_outcomes(const Plan& p, const double (&arm_mhz)[3],
                                         double cycles_b = 1.5e6, bool compute_bound = true) {
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
}  // namespace

TEST_CASE("report: arms at different clocks are compared at one clock, unless asked not to") {
  Plan p = make_plan(1);
  // A2 ran 5 % below A1's clock: raw, the baseline "drifted" 5 % and the shape is unstable.
  const double mhz[3] = {1500, 1450, 1425};
  auto outcomes = clocked_outcomes(p, mhz);
  StatsOptions raw;
  raw.clock_normalize = false;
  Report r0 = build_report(p, outcomes, raw, "d");
  REQUIRE(r0.shapes[0].drift);
  CHECK(*r0.shapes[0].drift == doctest::Approx(1500.0 / 1425).epsilon(0.005));
  CHECK(r0.shapes[0].verdict == Verdict::unstable);
  CHECK(!r0.shapes[0].reference_mhz);

  Report r = build_report(p, outcomes, {}, "d");
  const ShapeRow& row = r.shapes[0];
  REQUIRE(row.reference_mhz);
  CHECK(*row.reference_mhz == doctest::Approx(1450).epsilon(0.02));
  CHECK(std::fabs(*row.drift - 1) < 0.002);
  CHECK(row.verdict == Verdict::same);
  CHECK(*row.speedup == doctest::Approx(1).epsilon(0.002));
  for (const ArmStats& a : row.arms) {
    CHECK(*a.clock_slope == doctest::Approx(-1).epsilon(0.03));
    CHECK(a.median_ns == doctest::Approx(1.5e9 / *row.reference_mhz).epsilon(0.002));
    CHECK(a.raw_median_ns != doctest::Approx(a.median_ns).epsilon(0.005));
  }
  // The candidate ran 3 % slower clocks than the baseline: recorded, so a reader can see it.
  REQUIRE(row.clock_gap);
  CHECK(*row.clock_gap == doctest::Approx(1450.0 / 1462.5 - 1).epsilon(0.2));
  auto rows = parse_csv(render(r, "csv", {}));
  REQUIRE(rows.size() == 2);
  auto col = [&](const std::string& name) { return csv_column(rows, name); };
  CHECK(std::stod(rows[1][col("reference_mhz")]) == *row.reference_mhz);
  CHECK(std::stod(rows[1][col("A2_raw_median_ns")]) == row.arms[2].raw_median_ns);
  CHECK(std::stod(rows[1][col("B_clock_slope")]) == *row.arms[1].clock_slope);
  CHECK(rows[0].back() == "A2_failure");
  check_round_trip(r);
  CHECK(schema_errors(to_json(r)).empty());
}

TEST_CASE("report: a shape with an unclocked arm is compared as measured, and says so") {
  Plan p = make_plan(1);
  const double mhz[3] = {1500, 1450, 1425};
  auto outcomes = clocked_outcomes(p, mhz);
  outcomes[1].result->measurement.clock.sample_mhz.clear();  // B from before clocks were recorded
  Report r = build_report(p, outcomes, {}, "d");
  CHECK(!r.shapes[0].reference_mhz);
  CHECK(r.shapes[0].arms[1].median_ns == r.shapes[0].arms[1].raw_median_ns);
  const std::string term = render(r, "terminal", {});
  CHECK(term.find("compared as measured, not at one clock: arm(s) B") != std::string::npos);
}

TEST_CASE(
    "report: a real speedup survives clock normalization, a memory-bound time is left alone") {
  Plan p = make_plan(1);
  const double mhz[3] = {1500, 1400, 1500};
  // The candidate needs 10 % fewer cycles but, drawing more power, ran at a 7 % lower clock.
  Report r = build_report(p, clocked_outcomes(p, mhz, 1.35e6), {}, "d");
  CHECK(*r.shapes[0].speedup == doctest::Approx(1.5 / 1.35).epsilon(0.003));
  CHECK(r.shapes[0].verdict == Verdict::faster);
  StatsOptions raw;
  raw.clock_normalize = false;
  Report r0 = build_report(p, clocked_outcomes(p, mhz, 1.35e6), raw, "d");
  CHECK(*r0.shapes[0].speedup == doctest::Approx(1.5 / 1.35 * 1400 / 1500).epsilon(0.005));

  Report m = build_report(p, clocked_outcomes(p, mhz, 1.5e6, false), {}, "d");
  for (const ArmStats& a : m.shapes[0].arms) {
    CHECK(std::fabs(*a.clock_slope) < 0.1);
    CHECK(a.median_ns == doctest::Approx(a.raw_median_ns).epsilon(0.002));
  }
  CHECK(*m.shapes[0].speedup == doctest::Approx(1).epsilon(0.002));
}
