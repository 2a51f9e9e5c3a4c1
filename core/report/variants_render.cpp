// The formats of a variants report (variants_report.hpp): a matrix of shapes x candidates, each
// cell the candidate's speedup over the baseline with its interval and verdict, and a summary
// line per candidate (geomean, interval, verdict counts). Markdown adds each candidate's full
// two-variant report, folded; the PR comment stays under GitHub's limit by cutting matrix rows.
#include <algorithm>

#include "report/markdown.hpp"
#include "report/report_render.hpp"
#include "report/text_table.hpp"
#include "report/variants_report.hpp"

namespace abh {
namespace {

using markdown::code;
using markdown::esc;

// "main (1a2b3c4d5e6f) OPT=-O3 run {"tactic":"default"}"
std::string variant_text(const VariantEntry& v) {
  std::string out = v.revision + " (" + fmt::short_id(v.commit.empty() ? v.digest : v.commit) + ")";
  for (const auto& [k, value] : v.build) out += " " + k + "=" + value;
  if (!v.run.empty()) out += " run " + v.run.dump();
  return out;
}

std::string matrix_cell(const ShapeRow& row) {
  if (!row.speedup) return to_string(row.verdict);
  return fmt::ratio(*row.speedup) + " " + fmt::interval(*row.ci) + " " + to_string(row.verdict);
}

std::string geomean_text(const Summary& s) {
  if (!s.geomean) return "no shape compared";
  return fmt::ratio(*s.geomean) + " " + fmt::interval(*s.geomean_ci) +
         (s.geomean_verdict ? " " + to_string(*s.geomean_verdict) : std::string());
}

// The baseline's drift (last arm / first arm) of shape i: the same in every candidate's report,
// which all hold the baseline's arms.
std::string drift_text(const VariantsReport& r, std::size_t i) {
  const ShapeRow& row = r.candidates.front().report.shapes[i];
  return row.drift ? fmt::drift(*row.drift) : "-";
}

std::string control_line(const VariantsReport& r) {
  return "each comparison at " + fmt::percent(r.comparison_confidence, 2) +
         " confidence: Bonferroni over " + std::to_string(r.candidates.size()) +
         " candidate(s), so that all of their intervals hold together at " +
         fmt::percent(r.confidence, 1) + " (docs/statistics.md)";
}

std::string run_id(const VariantsReport& r) {
  return r.candidates.empty() ? "" : r.candidates.front().report.provenance.run_id;
}

std::size_t shape_count(const VariantsReport& r) {
  return r.candidates.empty() ? 0 : r.candidates.front().report.shapes.size();
}

}  // namespace

std::string render_variants_terminal(const VariantsReport& r, const RenderOptions& opt) {
  using text_table::Cell;
  std::string out = "abharness run " + run_id(r) + ": " + std::to_string(r.candidates.size()) +
                    " candidate(s) against the baseline " + r.baseline + "\n";
  for (const auto& v : r.variants)
    out += "  " + std::string(v.name == r.baseline ? "baseline  " : "candidate ") + v.name + ": " +
           variant_text(v) + "\n";
  out += "speedup = baseline time / candidate time (> 1: candidate faster); " + control_line(r) +
         "\n\n";
  std::vector<std::vector<Cell>> rows;
  std::vector<Cell> head{{"shape"}, {"drift"}};
  for (const auto& c : r.candidates) head.push_back({c.name});
  rows.push_back(head);
  for (std::size_t i = 0; i < shape_count(r); ++i) {
    std::vector<Cell> row{{r.candidates.front().report.shapes[i].shape}, {drift_text(r, i)}};
    for (const auto& c : r.candidates)
      row.push_back(
          {matrix_cell(c.report.shapes[i]), fmt::verdict_colour(c.report.shapes[i].verdict)});
    rows.push_back(std::move(row));
  }
  out += text_table::render(rows, opt.color) + "\n";
  for (const auto& c : r.candidates)
    out += c.name + " vs " + r.baseline + ": geomean " + geomean_text(c.report.summary) + "; " +
           fmt::verdict_counts(c.report.summary) + "\n";
  return out;
}

namespace {

std::string markdown_title(const VariantsReport& r) {
  std::string out = "## abharness: " + std::to_string(r.candidates.size()) +
                    " candidate(s) against " + code(r.baseline) + "\n\n";
  out += "| variant | role | revision and settings |\n|:---|:---|:---|\n";
  for (const auto& v : r.variants)
    out += "| " + code(v.name) + " | " + (v.name == r.baseline ? "baseline" : "candidate") + " | " +
           esc(variant_text(v)) + " |\n";
  return out + "\nSpeedup = baseline time / candidate time (> 1: candidate faster); " +
         esc(control_line(r)) + ".\n\n";
}

std::string markdown_summary(const VariantsReport& r) {
  std::string out = "| candidate | geomean | verdicts |\n|:---|:---|:---|\n";
  for (const auto& c : r.candidates)
    out += "| " + code(c.name) + " | " + geomean_text(c.report.summary) + " | " +
           fmt::verdict_counts(c.report.summary) + " |\n";
  return out + "\n";
}

std::string matrix_head(const VariantsReport& r) {
  std::string head = "| shape | drift |", rule = "|:---|---:|";
  for (const auto& c : r.candidates) head += " " + code(c.name) + " |", rule += ":---|";
  return head + "\n" + rule + "\n";
}

std::string matrix_row(const VariantsReport& r, std::size_t i) {
  std::string line =
      "| " + code(r.candidates.front().report.shapes[i].shape) + " | " + drift_text(r, i) + " |";
  for (const auto& c : r.candidates) {
    const ShapeRow& row = c.report.shapes[i];
    const bool change = row.verdict == Verdict::faster || row.verdict == Verdict::slower;
    line += " " + (change ? "**" + matrix_cell(row) + "**" : matrix_cell(row)) + " |";
  }
  return line + "\n";
}

}  // namespace

std::string render_variants_markdown(const VariantsReport& r, const RenderOptions& opt) {
  std::string out = markdown_title(r) + markdown_summary(r) + matrix_head(r);
  for (std::size_t i = 0; i < shape_count(r); ++i) out += matrix_row(r, i);
  out += "\n";
  for (const auto& c : r.candidates)
    out += "<details><summary>" + esc(c.name) + " against " + esc(r.baseline) +
           ": the full report</summary>\n\n" + render_markdown(c.report, opt) + "\n</details>\n\n";
  return out;
}

std::string render_variants_pr(const VariantsReport& r, const RenderOptions&) {
  std::string out = std::string(kPrMarker) + "\n" + markdown_title(r) + markdown_summary(r);
  const std::string digest =
      r.candidates.empty() ? "" : r.candidates.front().report.provenance.result_set_digest;
  const std::string tail = "\nResult-set digest " + code(digest) +
                           " (`abharness verify` checks it" + " against the run directory).\n";
  // The matrix fills what is left below the limit, row by row; the rest is counted.
  constexpr std::size_t kReserve = 512;  // the cut notice and the tail
  std::string matrix = matrix_head(r);
  std::size_t shown = 0;
  for (; shown < shape_count(r); ++shown) {
    const std::string row = matrix_row(r, shown);
    if (out.size() + matrix.size() + row.size() + tail.size() + kReserve > kPrCommentLimit) break;
    matrix += row;
  }
  out += matrix;
  if (shown < shape_count(r))
    out += "\n_... and " + std::to_string(shape_count(r) - shown) +
           " more shapes: report.md in the run directory has them all._\n";
  return out + tail;
}

std::string render_variants_csv(const VariantsReport& r, const RenderOptions&) {
  std::string out = fmt::csv_row({"shape", "timing", "baseline", "candidate", "speedup", "ci_low",
                                  "ci_high", "verdict", "baseline_ns", "candidate_ns", "drift"});
  for (const auto& c : r.candidates)
    for (const ShapeRow& row : c.report.shapes)
      out +=
          fmt::csv_row({row.shape, row.timing, r.baseline, c.name, fmt::csv_number(row.speedup),
                        fmt::csv_number(row.ci ? std::optional<double>(row.ci->lo) : std::nullopt),
                        fmt::csv_number(row.ci ? std::optional<double>(row.ci->hi) : std::nullopt),
                        to_string(row.verdict), fmt::csv_number(row.baseline_ns),
                        fmt::csv_number(row.candidate_ns), fmt::csv_number(row.drift)});
  return out;
}

std::string render_variants_tidy_csv(const VariantsReport& r, const RenderOptions&) {
  std::vector<TidyComparison> comparisons;
  for (const auto& c : r.candidates) comparisons.push_back({c.name, &c.report});
  return render_tidy_csv(comparisons);
}

}  // namespace abh
