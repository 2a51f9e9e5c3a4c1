#include "report/export.hpp"

#include "report/report_render.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

const std::vector<ExportFormat>& export_format_table() {
  static const std::vector<ExportFormat> table = {
      {"bmf", "Bencher Metric Format JSON: latency and speedup per shape, with bounds", export_bmf},
      {"pytest-benchmark", "pytest-benchmark JSON: sample statistics per shape and variant",
       export_pytest_benchmark},
  };
  return table;
}

std::vector<std::string> export_formats() {
  std::vector<std::string> names;
  for (const auto& f : export_format_table()) names.push_back(f.name);
  return names;
}

std::vector<const ShapeRow*> compared_rows(const Report& r, std::vector<std::string>& notes) {
  std::vector<const ShapeRow*> rows;
  for (const ShapeRow& row : r.shapes) {
    if (row.verdict != Verdict::failed)  // times, speedup and interval are all set (report.hpp)
      rows.push_back(&row);
    else  // the failure is a worker's text: one line, no terminal escapes, on stderr
      notes.push_back(row.shape + ": left out, failed (" + fmt::one_line(row.failure) + ")");
  }
  return rows;
}

std::string export_formats_help() {
  std::vector<std::string> items;
  for (const auto& f : export_format_table()) items.push_back(f.name + " (" + f.description + ")");
  return join(items, " | ");
}

const ExportFormat& export_format(const std::string& name) {
  for (const auto& f : export_format_table())
    if (f.name == name) return f;
  throw UsageError("unknown export format '" + name + "'; known: " + join(export_formats(), ", "));
}

}  // namespace abh
