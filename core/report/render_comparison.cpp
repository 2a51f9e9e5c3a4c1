// Renderings of a comparison across runs (comparison.hpp): terminal, Markdown, JSON, CSV and SVG.
// Each one is titled as a comparison across runs, not an interleaved measurement, and shows per
// shape each run's speedup with that run's own interval, then each run's absolute times.
#include <algorithm>
#include <array>

#include "report/comparison.hpp"
#include "report/markdown.hpp"
#include "report/report_render.hpp"
#include "report/svg.hpp"
#include "report/text_table.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

using markdown::code;
using markdown::esc;

const char* const kExplanation =
    "Each run is its own interleaved A/B/A measurement, with its own intervals. The runs were "
    "measured on different machines or at different times: a difference between two runs' "
    "numbers is not a measured speedup and has no interval.";

std::string speedup_text(const ComparedCell& c) {
  if (!c) return "not in run";
  if (!c->speedup) return "failed";
  return fmt::ratio(*c->speedup) + " " + fmt::interval(*c->ci) + " " + to_string(c->verdict);
}

std::string time_text(const ComparedCell& c, const std::optional<double> ShapeEstimate::*field) {
  if (!c) return "not in run";
  const auto& v = (*c).*field;
  return v ? fmt::duration(*v) : "-";
}

std::string geomean_text(const ComparedRun& r, double confidence) {
  if (!r.geomean) return "-";
  return fmt::ratio(*r.geomean) + " (" + fmt::confidence_label(confidence) + " " +
         fmt::interval(*r.geomean_ci) + ", " + to_string(*r.geomean_verdict) + ")";
}

std::string render_terminal_comparison(const Comparison& c, const RenderOptions& opt) {
  std::string out = std::string(kCompareTitle) + "\n" + kExplanation + "\n\n";
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const ComparedRun& r = c.runs[i];
    out += "[" + std::to_string(i + 1) + "] " + fmt::one_line(r.label) + " (" +
           fmt::one_line(r.created_at) + "): " + fmt::one_line(r.baseline) + " vs " +
           fmt::one_line(r.candidate) + "; geomean " + geomean_text(r, c.stats.confidence) + "\n";
    for (const auto& m : r.machines) out += "    " + fmt::one_line(m) + "\n";
  }
  for (const auto& note : c.notes) out += "note: " + fmt::one_line(note) + "\n";
  std::vector<std::vector<text_table::Cell>> rows;
  std::vector<text_table::Cell> head{{"shape"}};
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const std::string n = "[" + std::to_string(i + 1) + "] ";
    head.insert(head.end(), {{n + "speedup"}, {n + "baseline"}, {n + "candidate"}});
  }
  rows.push_back(head);
  for (const auto& s : c.shapes) {
    std::vector<text_table::Cell> cells{{fmt::one_line(s.shape)}};
    for (const auto& cell : s.runs)
      cells.insert(cells.end(),
                   {{speedup_text(cell), cell ? fmt::verdict_colour(cell->verdict) : ""},
                    {time_text(cell, &ShapeEstimate::baseline_ns)},
                    {time_text(cell, &ShapeEstimate::candidate_ns)}});
    rows.push_back(std::move(cells));
  }
  return out + "\n" + text_table::render(rows, opt.color, text_table::LastColumn::numbers);
}

std::string render_markdown_comparison(const Comparison& c, const RenderOptions&) {
  const std::string ci = fmt::confidence_label(c.stats.confidence);
  std::string out = "### " + std::string(kCompareTitle) + "\n\n" + kExplanation + "\n\n";
  out +=
      "| | run | created | machine | baseline | candidate | geomean speedup | result-set digest "
      "|\n|---:|:---|:---|:---|:---|:---|:---|:---|\n";
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const ComparedRun& r = c.runs[i];
    std::vector<std::string> machines;
    for (const auto& m : r.machines) machines.push_back(esc(m));
    out += "| " + std::to_string(i + 1) + " | " + code(r.label) + " | " + esc(r.created_at) +
           " | " + join(machines, "<br>") + " | " + code(r.baseline) + " | " + code(r.candidate) +
           " | " + esc(geomean_text(r, c.stats.confidence)) + " | " +
           code(fmt::short_id(r.result_set_digest)) + " |\n";
  }
  out += "\n";
  for (const auto& note : c.notes) out += "- Note: " + esc(note) + "\n";
  if (!c.notes.empty()) out += "\n";

  std::string head = "| shape |", rule = "|:---|";
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    head += " [" + std::to_string(i + 1) + "] " + esc(c.runs[i].label) + " |";
    rule += ":---|";
  }
  out += "**Speedup per shape** (baseline time / candidate time within each run, " + ci +
         ", verdict)\n\n" + head + "\n" + rule + "\n";
  for (const auto& s : c.shapes) {
    out += "| " + code(s.shape) + (s.label.empty() ? "" : " " + esc(s.label)) + " |";
    for (const auto& cell : s.runs) out += " " + esc(speedup_text(cell)) + " |";
    out += "\n";
  }
  out += "\n**Absolute times** (mean of each run's arm medians: baseline / candidate)\n\n" + head +
         "\n" + rule + "\n";
  for (const auto& s : c.shapes) {
    out += "| " + code(s.shape) + " |";
    for (const auto& cell : s.runs)
      out += " " +
             (cell ? time_text(cell, &ShapeEstimate::baseline_ns) + " / " +
                         time_text(cell, &ShapeEstimate::candidate_ns)
                   : std::string("not in run")) +
             " |";
    out += "\n";
  }
  return out;
}

using fmt::csv_number;

// RFC 4180 like report.csv: one row per shape, seven columns per run prefixed with its label.
std::string render_csv_comparison(const Comparison& c, const RenderOptions&) {
  constexpr std::array<const char*, 7> kColumns = {"present", "verdict",     "speedup",     "ci_lo",
                                                   "ci_hi",   "baseline_ns", "candidate_ns"};
  std::vector<std::string> header{"shape", "label"};
  for (const auto& r : c.runs)
    for (const char* col : kColumns) header.push_back(r.label + "_" + col);
  std::string out = fmt::csv_row(header);
  for (const auto& s : c.shapes) {
    std::vector<std::string> cells{s.shape, s.label};
    for (const auto& cell : s.runs) {
      if (!cell) {
        cells.push_back("false");
        cells.insert(cells.end(), kColumns.size() - 1, "");
        continue;
      }
      cells.insert(cells.end(), {"true", to_string(cell->verdict), csv_number(cell->speedup),
                                 cell->ci ? fmt::exact(cell->ci->lo) : "",
                                 cell->ci ? fmt::exact(cell->ci->hi) : "",
                                 csv_number(cell->baseline_ns), csv_number(cell->candidate_ns)});
    }
    out += fmt::csv_row(cells);
  }
  return out;
}

// One row group per shape, one bar per run (1.0 to its speedup, its interval as a whisker),
// a colour per run named in the legend.
std::string render_svg_comparison(const Comparison& c, const RenderOptions&) {
  using svg::num;
  using svg::xml;
  static const std::array<const char*, 6> kColours = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                                      "#d62728", "#9467bd", "#8c564b"};
  constexpr double kWidth = 960, kLabelW = 250, kValueW = 170, kBar = 12, kGap = 10, kBottom = 44;
  const double top = 64 + 16 * static_cast<double>(c.runs.size());
  const double group = kBar * static_cast<double>(c.runs.size()) + kGap;
  const double plot_h = group * static_cast<double>(std::max<std::size_t>(c.shapes.size(), 1));
  const double height = top + plot_h + kBottom;
  std::vector<double> values;
  for (const auto& s : c.shapes)
    for (const auto& cell : s.runs)
      if (cell && cell->speedup)
        values.insert(values.end(), {*cell->speedup, cell->ci->lo, cell->ci->hi});
  const svg::Scale x = svg::speedup_scale(values, c.stats.noise_band, kLabelW, kWidth - kValueW);
  auto colour = [&](std::size_t run) { return kColours[run % kColours.size()]; };

  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" +
       num(height) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<title>" + xml(kCompareTitle) + "</title>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
       "\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" + xml(kCompareTitle) +
       "</text>\n";
  o += "<text x=\"10\" y=\"38\">" +
       xml("speedup = baseline time / candidate time within each run, with that run's " +
           fmt::confidence_label(c.stats.confidence) +
           "; the runs are not compared with each other") +
       "</text>\n";
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const double y = 52 + 16 * static_cast<double>(i);
    o += "<rect x=\"10\" y=\"" + num(y) + "\" width=\"14\" height=\"10\" fill=\"" + colour(i) +
         "\"/>" +
         svg::fitted_text("[" + std::to_string(i + 1) + "] " + c.runs[i].label + ": " +
                              join(c.runs[i].machines, "; "),
                          30, y + 9, kWidth - 40, 11, " font-size=\"11\"") +
         "\n";
  }
  o += svg::speedup_axis(x, c.stats.noise_band, top, plot_h);
  for (std::size_t s = 0; s < c.shapes.size(); ++s) {
    const ComparedShape& shape = c.shapes[s];
    const double y0 = top + group * static_cast<double>(s);
    o += "<g class=\"shape\">" + svg::fitted_text(shape.shape, kLabelW - 8, y0 + group / 2 + 4,
                                                  kLabelW - 16, 12, " text-anchor=\"end\"");
    for (std::size_t i = 0; i < shape.runs.size(); ++i) {
      const ComparedCell& cell = shape.runs[i];
      const double cy = y0 + kGap / 2 + kBar * (static_cast<double>(i) + 0.5);
      o += "<g class=\"run\"><title>" +
           xml(shape.shape + " [" + std::to_string(i + 1) + "] " + speedup_text(cell)) + "</title>";
      const std::optional<double> speedup = cell ? cell->speedup : std::nullopt;
      if (speedup) {
        const double bx = std::min(x(1), x(*speedup)), bw = std::abs(x(*speedup) - x(1));
        o += "<rect class=\"bar\" x=\"" + num(bx) + "\" y=\"" + num(cy - kBar * 0.35) +
             "\" width=\"" + num(bw) + "\" height=\"" + num(kBar * 0.7) + "\" fill=\"" + colour(i) +
             "\"/><path class=\"ci\" d=\"M " + num(x(cell->ci->lo)) + " " + num(cy) + " H " +
             num(x(cell->ci->hi)) + "\" stroke=\"#000000\"/>";
      }
      o += "<text x=\"" + num(x.x1 + 8) + "\" y=\"" + num(cy + 4) + "\" font-size=\"10\">" +
           xml(speedup ? fmt::ratio(*speedup)
               : cell  ? "failed"
                       : "not in run") +
           "</text></g>";
    }
    o += "</g>\n";
  }
  return o + "</svg>\n";
}

struct ComparisonFormat {
  const char* name;
  const char* extension;
  std::string (*render)(const Comparison&, const RenderOptions&);
};

std::string render_json_comparison(const Comparison& c, const RenderOptions&) {
  return to_json(c).dump(2) + "\n";
}

const std::array<ComparisonFormat, 5>& format_table() {
  static const std::array<ComparisonFormat, 5> table = {{
      {"terminal", "txt", render_terminal_comparison},
      {"markdown", "md", render_markdown_comparison},
      {"json", "json", render_json_comparison},
      {"csv", "csv", render_csv_comparison},
      {"svg", "svg", render_svg_comparison},
  }};
  return table;
}

const ComparisonFormat& comparison_format(const std::string& name) {
  for (const auto& f : format_table())
    if (f.name == name) return f;
  throw UsageError("comparison format '" + name + "' is unknown: use one of " +
                   join(comparison_formats(), ", "));
}

}  // namespace

std::vector<std::string> comparison_formats() {
  std::vector<std::string> names;
  for (const auto& f : format_table()) names.emplace_back(f.name);
  return names;
}

std::string comparison_extension(const std::string& format) {
  return comparison_format(format).extension;
}

std::string render_comparison(const Comparison& c, const std::string& format,
                              const RenderOptions& opt) {
  return comparison_format(format).render(c, opt);
}

}  // namespace abh
