// Exports of a run to the formats continuous-benchmarking tools read, so that a team can keep its
// history in the tool it already uses (docs/export.md). Like the report formats, each format is
// one function in its own file (export_<format>.cpp) behind a small registry, and only formats
// what it is given: the Report's numbers, and for per-sample statistics the validated results.
//   bmf               Bencher Metric Format: per shape, the candidate's latency and the speedup
//                     with its interval (schemas/bmf.schema.json)
//   pytest-benchmark  pytest-benchmark's JSON: per shape and variant, the statistics of the
//                     pooled samples of its arms, in seconds
#pragma once

#include <string>
#include <vector>

#include "model/outcome.hpp"
#include "report/report.hpp"

namespace abh {

struct Export {
  std::string text;                // the file's content
  std::vector<std::string> notes;  // what it leaves out and why (failed shapes), for stderr
};

using ExportFunction = Export (*)(const Report&, const std::vector<ArmOutcome>&);

struct ExportFormat {
  std::string name;
  std::string description;
  ExportFunction render;
};

const std::vector<ExportFormat>& export_format_table();
std::vector<std::string> export_formats();
std::string export_formats_help();  // "bmf (...) | pytest-benchmark (...)", for --format's help
const ExportFormat& export_format(const std::string& name);  // UsageError naming the known ones

// The rows that were compared (every verdict but failed), in report order; each failed row is left
// out with a note naming it and why ("m1_n2_k3: left out, failed (A2: exit code 3 ...)").
std::vector<const ShapeRow*> compared_rows(const Report& r, std::vector<std::string>& notes);

Export export_bmf(const Report& r, const std::vector<ArmOutcome>& outcomes);
Export export_pytest_benchmark(const Report& r, const std::vector<ArmOutcome>& outcomes);

}  // namespace abh
