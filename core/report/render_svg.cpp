// SVG chart of a report, on a logarithmic speedup axis with the reference line at 1.0 and the
// noise band shaded. Up to kMaxShapeRows rows it draws one horizontal bar per shape from 1.0 to
// its speedup, the confidence interval as a whisker and the baseline drift (last A / first A) as a
// diamond; a failed shape gets a row with its reason and no bar. A larger grid would make a chart
// tens of thousands of pixels tall that no renderer draws and no reader reads, so it is
// summarised instead: the distribution of the speedups (a histogram stacked by verdict), then the
// shapes with the lowest speedups and the failed ones, each as a row. Text that would run out of
// its room is cut with an ellipsis and keeps its whole wording as a <title> (the tooltip). Drawn
// by hand (no plotting library) so that it is deterministic and self-contained.
#include <algorithm>
#include <array>
#include <cmath>

#include "report/report_render.hpp"
#include "report/svg.hpp"

namespace abh {
namespace {

using svg::num;
using svg::xml;

const char* fill_of(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "#2e7d32";
    case Verdict::slower:
      return "#c62828";
    case Verdict::same:
      return "#757575";
    case Verdict::ambiguous:
      return "#f9a825";
    case Verdict::unstable:
      return "#8e24aa";
    case Verdict::failed:
      return "#000000";
  }
  return "#000000";
}

svg::Scale make_scale(const Report& r, double x0, double x1) {
  std::vector<double> v;
  for (const auto& row : r.shapes) {
    if (row.speedup) v.push_back(*row.speedup);
    if (row.ci) v.insert(v.end(), {row.ci->lo, row.ci->hi});
    if (row.drift) v.push_back(*row.drift);
  }
  return svg::speedup_scale(v, r.stats.noise_band, x0, x1);
}

// The layout of the chart. Past kMaxShapeRows shapes the chart is a summary: at 24 px a row,
// 100 rows are 2,400 px, about as tall as a chart is still read whole.
constexpr double kWidth = 960, kLabelW = 250, kValueW = 190, kRowH = 24, kBottom = 44;
constexpr double kHistH = 180, kLine = 16;
constexpr std::size_t kMaxShapeRows = 100, kNamedLowest = 20, kNamedFailed = 10;

std::string svg_open(const Report& r, double height) {
  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" +
       num(height) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<title>" + xml("abharness " + r.provenance.run_id + ": per-shape speedup") + "</title>\n";
  return o + "<rect x=\"0\" y=\"0\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
         "\" fill=\"#ffffff\"/>\n";
}

// The title and the subtitle (wrapped to the width); `y` moves below them.
std::string titles(const Report& r, double& y) {
  std::string o = svg::fitted_text(fmt::variants_title(r), 10, 20, kWidth - 20, 14,
                                   " font-size=\"14\" font-weight=\"bold\"") +
                  "\n";
  std::string subtitle =
      "speedup = baseline time / candidate time (> 1: candidate faster); " + fmt::timing_line(r);
  for (const auto& line : fmt::timing_geomeans(r)) subtitle += "; " + line;
  if (r.summary.geomean)
    subtitle += "; geomean " + fmt::ratio(*r.summary.geomean) + " " +
                fmt::confidence_label(r.stats.confidence) + " " +
                fmt::interval(*r.summary.geomean_ci) + "; summed-time ratio " +
                fmt::ratio(*r.summary.summed_time_ratio);
  y = 38;
  for (const auto& line : svg::wrap(subtitle, kWidth - 20, 12)) {
    o += "<text x=\"10\" y=\"" + num(y) + "\">" + xml(line) + "</text>\n";
    y += kLine;
  }
  return o;
}

// The legend on one line at `y` (its baseline); with `verdicts`, a swatch per verdict colour.
std::string legend(const Report& r, double y, bool verdicts) {
  const std::string top = num(y - 9), mid = num(y - 4);
  std::string o = "<g class=\"legend\" font-size=\"11\">";
  o += "<rect x=\"10\" y=\"" + top +
       "\" width=\"14\" height=\"10\" fill=\"#e8e8e8\"/><text x=\"28\" y=\"" + num(y) + "\">" +
       xml("noise band \u00b1" + fmt::percent(r.stats.noise_band, 1)) + "</text>";
  o += "<line x1=\"150\" y1=\"" + mid + "\" x2=\"174\" y2=\"" + mid +
       "\" stroke=\"#000000\"/><text x=\"178\" y=\"" + num(y) + "\">" +
       xml(fmt::confidence_label(r.stats.confidence)) + "</text>";
  o += "<path d=\"M 270 " + top +
       " l 4 5 l -4 5 l -4 -5 Z\" fill=\"#ffffff\" stroke=\"#000000\"/>" + "<text x=\"280\" y=\"" +
       num(y) + "\">drift (last A / first A)</text>";
  double x = 430;
  for (Verdict v : all_verdicts()) {
    if (!verdicts || v == Verdict::failed) continue;
    o += "<rect x=\"" + num(x) + "\" y=\"" + top + "\" width=\"14\" height=\"10\" fill=\"" +
         fill_of(v) + "\"/><text x=\"" + num(x + 18) + "\" y=\"" + num(y) + "\">" + to_string(v) +
         "</text>";
    x += 90;
  }
  return o + "</g>\n";
}

// One shape's row: its label, then its bar, interval, drift and value, or its failure.
std::string shape_row(const Report& r, const ShapeRow& row, const svg::Scale& x, double y) {
  const double cy = y + kRowH / 2;
  const std::string label = row.shape + (row.label.empty() ? "" : " (" + row.label + ")");
  // The <title> comes first: it is the group's tooltip, and it holds the whole label.
  std::string tip = label + ": failed: " + row.failure;
  if (row.speedup)
    tip = label + ": " + fmt::ratio(*row.speedup) + " " +
          fmt::confidence_label(r.stats.confidence) + " " + fmt::interval(*row.ci) +
          (row.drift ? ", drift " + fmt::drift(*row.drift) : "") + ", " + to_string(row.verdict);
  std::string o = "<g class=\"shape\"><title>" + xml(tip) + "</title>";
  o += svg::fitted_text(label, kLabelW - 8, cy + 4, kLabelW - 16, 12, " text-anchor=\"end\"");
  if (!row.speedup)
    return o +
           svg::fitted_text(
               "failed: " + row.failure, x.x0 + 4, cy + 4, kWidth - x.x0 - 14, 12,
               std::string(" class=\"failed\" fill=\"") + fill_of(Verdict::failed) + "\"") +
           "</g>\n";
  const double bx = std::min(x(1), x(*row.speedup)), bw = std::abs(x(*row.speedup) - x(1));
  o += "<rect class=\"bar\" x=\"" + num(bx) + "\" y=\"" + num(cy - kRowH * 0.3) + "\" width=\"" +
       num(bw) + "\" height=\"" + num(kRowH * 0.6) + "\" fill=\"" + fill_of(row.verdict) +
       "\" fill-opacity=\"0.75\"/>";
  const double lo = x(row.ci->lo), hi = x(row.ci->hi);
  o += "<path class=\"ci\" d=\"M " + num(lo) + " " + num(cy - 5) + " V " + num(cy + 5) + " M " +
       num(lo) + " " + num(cy) + " H " + num(hi) + " M " + num(hi) + " " + num(cy - 5) + " V " +
       num(cy + 5) + "\" stroke=\"#000000\" fill=\"none\"/>";
  if (row.drift) {
    const double dx = x(*row.drift);
    o += "<path class=\"drift\" d=\"M " + num(dx) + " " + num(cy - 5) + " L " + num(dx + 4) + " " +
         num(cy) + " L " + num(dx) + " " + num(cy + 5) + " L " + num(dx - 4) + " " + num(cy) +
         " Z\" fill=\"#ffffff\" stroke=\"#000000\"/>";
  }
  const std::string value = fmt::ratio(*row.speedup) + " " + to_string(row.verdict) +
                            (row.throttled_arms.empty() ? "" : " (throttled)");
  o += svg::fitted_text(value, x.x1 + 8, cy + 4, kValueW - 14, 12,
                        std::string(" fill=\"") + fill_of(row.verdict) + "\"");
  return o + "</g>\n";
}

// Rows of shapes on the axis `x`, from `y` down; `y` moves below their axis labels.
std::string shape_rows(const Report& r, const std::vector<const ShapeRow*>& rows,
                       const svg::Scale& x, double& y) {
  const double plot_h = kRowH * static_cast<double>(std::max<std::size_t>(rows.size(), 1));
  std::string o = svg::speedup_axis(x, r.stats.noise_band, y, plot_h);
  for (std::size_t i = 0; i < rows.size(); ++i)
    o += shape_row(r, *rows[i], x, y + kRowH * static_cast<double>(i));
  y += plot_h + kBottom;
  return o;
}

// How many compared shapes' speedups fall in each of kBins equal steps of the log axis, by
// verdict, drawn as stacked columns from `top` down to `top + kHistH`.
std::string histogram(const Report& r, const svg::Scale& x, double top) {
  constexpr std::size_t kBins = 60;
  const std::vector<Verdict> verdicts = {Verdict::faster, Verdict::same, Verdict::ambiguous,
                                         Verdict::unstable, Verdict::slower};
  std::vector<std::array<int, 5>> counts(kBins, std::array<int, 5>{});
  int most = 1;
  for (const auto& row : r.shapes) {
    if (!row.speedup) continue;
    const double t = (x(*row.speedup) - x.x0) / (x.x1 - x.x0);
    const auto bin = std::min(kBins - 1, static_cast<std::size_t>(std::max(0.0, t) * kBins));
    const auto v = static_cast<std::size_t>(
        std::find(verdicts.begin(), verdicts.end(), row.verdict) - verdicts.begin());
    if (v < verdicts.size()) ++counts[bin][v];
    int total = 0;
    for (int c : counts[bin]) total += c;
    most = std::max(most, total);
  }
  const double bin_w = (x.x1 - x.x0) / kBins, per_shape = kHistH / most;
  std::string o = svg::speedup_axis(x, r.stats.noise_band, top, kHistH);
  for (std::size_t b = 0; b < kBins; ++b) {
    double y = top + kHistH;
    const double lo = x.lo * std::pow(x.hi / x.lo, double(b) / kBins);
    const double hi = x.lo * std::pow(x.hi / x.lo, double(b + 1) / kBins);
    for (std::size_t v = 0; v < verdicts.size(); ++v) {
      if (counts[b][v] == 0) continue;
      const double h = counts[b][v] * per_shape;
      y -= h;
      o += "<rect class=\"bin\" x=\"" + num(x.x0 + bin_w * double(b)) + "\" y=\"" + num(y) +
           "\" width=\"" + num(bin_w) + "\" height=\"" + num(h) + "\" fill=\"" +
           fill_of(verdicts[v]) + "\" fill-opacity=\"0.8\"><title>" +
           xml(std::to_string(counts[b][v]) + " " + to_string(verdicts[v]) +
               " shape(s) with a speedup in [" + fmt::ratio(lo) + ", " + fmt::ratio(hi) + ")") +
           "</title></rect>";
    }
  }
  // The count axis, on the left of the plot.
  o += "<g class=\"counts\" font-size=\"11\" text-anchor=\"end\"><text x=\"" + num(x.x0 - 6) +
       "\" y=\"" + num(top + 4) + "\">" + std::to_string(most) + "</text><text x=\"" +
       num(x.x0 - 6) + "\" y=\"" + num(top + kHistH) + "\">0</text><text x=\"" + num(x.x0 - 6) +
       "\" y=\"" + num(top + kHistH / 2 + 4) + "\">shapes per bin</text></g>\n";
  return o;
}

std::string heading(const std::string& text, double y) {
  return svg::fitted_text(text, 10, y, kWidth - 20, 12, " font-weight=\"bold\"") + "\n";
}

// A large grid: the histogram, then the lowest speedups and the first failed shapes named.
std::string summary_chart(const Report& r, const svg::Scale& x, double& y) {
  std::vector<const ShapeRow*> compared, failed;
  for (const auto& row : r.shapes) (row.speedup ? compared : failed).push_back(&row);
  std::stable_sort(compared.begin(), compared.end(),
                   [](const ShapeRow* a, const ShapeRow* b) { return *a->speedup < *b->speedup; });
  const std::string n = std::to_string(r.shapes.size());
  std::string o = heading(n + " shapes, more than " + std::to_string(kMaxShapeRows) +
                              " to draw one row each: the distribution of the " +
                              std::to_string(compared.size()) +
                              " compared shapes' speedups, stacked by verdict",
                          y);
  o += histogram(r, x, y + 12);
  y += 12 + kHistH + kBottom;
  std::vector<const ShapeRow*> named(compared.begin(),
                                     compared.begin() + std::min(kNamedLowest, compared.size()));
  named.insert(named.end(), failed.begin(), failed.begin() + std::min(kNamedFailed, failed.size()));
  std::string what =
      "The " + std::to_string(std::min(kNamedLowest, compared.size())) + " lowest speedups";
  if (!failed.empty())
    what += ", then " + std::to_string(std::min(kNamedFailed, failed.size())) + " of the " +
            std::to_string(failed.size()) + " failed shapes";
  o += heading(what + " (report.md and report.csv list every shape)", y + 8);
  y += 20;
  return o + shape_rows(r, named, x, y);
}

}  // namespace

std::string render_svg(const Report& r, const RenderOptions&) {
  double y = 0;
  std::string body = titles(r, y);
  const bool summary = r.shapes.size() > kMaxShapeRows;
  body += legend(r, y + 2, summary);
  y += 2 + kLine + 4;
  const svg::Scale x = make_scale(r, kLabelW, kWidth - kValueW);
  if (summary) {
    body += summary_chart(r, x, y);
  } else {
    std::vector<const ShapeRow*> rows;
    for (const auto& row : r.shapes) rows.push_back(&row);
    body += shape_rows(r, rows, x, y);
  }
  return svg_open(r, y) + body + "</svg>\n";
}

}  // namespace abh
