// SVG chart: one horizontal bar per compared shape from 1.0 to its speedup, the confidence
// interval as a whisker, the baseline drift (last A / first A) as a diamond on the same axis, the
// reference line at 1.0 and the noise band shaded. A failed shape gets a row with its reason and
// no bar. Drawn by hand (no plotting library) so that it is deterministic and self-contained.
#include <algorithm>
#include <cmath>

#include "report/report_render.hpp"
#include "report/svg.hpp"

namespace abh {

namespace svg {

std::string xml(const std::string& raw) {
  std::string out;
  for (char c : fmt::one_line(raw)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  return fmt::fixed(v, 2);
}

std::string truncate(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

namespace {

// A tick step of 1, 2, 2.5 or 5 times a power of ten giving about `target` ticks over `range`.
double nice_step(double range, int target) {
  double raw = range / target;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

}  // namespace

Scale speedup_scale(std::vector<double> v, double band, double x0, double x1) {
  v.insert(v.end(), {1.0, 1 - band, 1 + band});
  double lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  double pad = std::max((hi - lo) * 0.08, 0.005);
  return {lo - pad, hi + pad, x0, x1};
}

std::string speedup_axis(const Scale& x, double band, double top, double plot_h) {
  std::string o;
  o += "<rect class=\"noise-band\" x=\"" + num(x(1 - band)) + "\" y=\"" + num(top) + "\" width=\"" +
       num(x(1 + band) - x(1 - band)) + "\" height=\"" + num(plot_h) + "\" fill=\"#e8e8e8\"/>\n";
  double step = nice_step(x.hi - x.lo, 6);
  int decimals = 0;  // just enough to tell the ticks apart: 0.05 -> 2, 0.025 -> 3
  while (decimals < 6 &&
         std::abs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) > 1e-9)
    ++decimals;
  o += "<g class=\"axis\" font-size=\"11\" text-anchor=\"middle\">";
  // Speedups are positive: no tick below 0. Starting at +0.0 also keeps ceil() of a small
  // negative number (-0.0) from printing a "-0x" tick.
  for (double k = std::max(0.0, std::ceil(x.lo / step)); k * step <= x.hi; ++k) {
    const double t = k * step;  // a multiple of the step: no error accumulates over the ticks
    o += "<line x1=\"" + num(x(t)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(x(t)) + "\" y2=\"" +
         num(top + plot_h) + "\" stroke=\"#f0f0f0\"/>";
    o += "<text x=\"" + num(x(t)) + "\" y=\"" + num(top + plot_h + 16) + "\">" +
         fmt::fixed(t, decimals) + "x</text>";
  }
  o += "</g>\n";
  o += "<text x=\"" + num((x.x0 + x.x1) / 2) + "\" y=\"" + num(top + plot_h + 36) +
       "\" text-anchor=\"middle\">speedup</text>\n";
  o += "<line class=\"reference\" x1=\"" + num(x(1)) + "\" y1=\"" + num(top - 4) + "\" x2=\"" +
       num(x(1)) + "\" y2=\"" + num(top + plot_h) + "\" stroke=\"#000000\"/>\n";
  return o;
}

}  // namespace svg

namespace {

using svg::num;
using svg::truncate;
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

// The layout of the chart and the phases that draw it, top to bottom.
constexpr double kWidth = 960, kLabelW = 250, kValueW = 170, kTop = 64, kRowH = 24, kBottom = 44;

std::string header(const Report& r, double height) {
  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" +
       num(height) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) +
       "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<title>" + xml("abharness " + r.provenance.run_id + ": per-shape speedup") + "</title>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + num(kWidth) + "\" height=\"" + num(height) +
       "\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">" +
       xml(fmt::variants_title(r)) + "</text>\n";
  std::string subtitle =
      "speedup = baseline time / candidate time (> 1: candidate faster); " + fmt::timing_line(r);
  for (const auto& line : fmt::timing_geomeans(r)) subtitle += "; " + line;
  if (r.summary.geomean)
    subtitle += "; geomean " + fmt::ratio(*r.summary.geomean) + " " +
                fmt::confidence_label(r.stats.confidence) + " " +
                fmt::interval(*r.summary.geomean_ci) + "; summed-time ratio " +
                fmt::ratio(*r.summary.summed_time_ratio);
  o += "<text x=\"10\" y=\"38\">" + xml(subtitle) + "</text>\n";
  return o;
}

std::string legend(const Report& r) {
  std::string o = "<g class=\"legend\" font-size=\"11\">";
  o += "<rect x=\"10\" y=\"46\" width=\"14\" height=\"10\" fill=\"#e8e8e8\"/><text x=\"28\" "
       "y=\"55\">" +
       xml("noise band \u00b1" + fmt::percent(r.stats.noise_band, 1)) + "</text>";
  o += "<line x1=\"150\" y1=\"51\" x2=\"174\" y2=\"51\" stroke=\"#000000\"/><text x=\"178\" "
       "y=\"55\">" +
       xml(fmt::confidence_label(r.stats.confidence)) + "</text>";
  o += "<path d=\"M 270 46 L 274 51 L 270 56 L 266 51 Z\" fill=\"#ffffff\" "
       "stroke=\"#000000\"/><text x=\"280\" y=\"55\">drift (last A / first A)</text>";
  o += "</g>\n";
  return o;
}

// One shape's row: its label, then its bar, interval, drift and value, or its failure.
std::string shape_row(const Report& r, const ShapeRow& row, const svg::Scale& x, double y) {
  const double cy = y + kRowH / 2;
  std::string label = row.shape + (row.label.empty() ? "" : " (" + row.label + ")");
  // The <title> comes first: it is the group's tooltip.
  std::string tip = row.shape + ": failed: " + row.failure;
  if (row.speedup)
    tip = row.shape + ": " + fmt::ratio(*row.speedup) + " " +
          fmt::confidence_label(r.stats.confidence) + " " + fmt::interval(*row.ci) +
          (row.drift ? ", drift " + fmt::drift(*row.drift) : "") + ", " + to_string(row.verdict);
  std::string o = "<g class=\"shape\"><title>" + xml(tip) + "</title>";
  o += "<text x=\"" + num(kLabelW - 8) + "\" y=\"" + num(cy + 4) + "\" text-anchor=\"end\">" +
       xml(truncate(label, 40)) + "</text>";
  if (!row.speedup)
    return o + "<text class=\"failed\" x=\"" + num(x.x0 + 4) + "\" y=\"" + num(cy + 4) +
           "\" fill=\"" + fill_of(Verdict::failed) + "\">" +
           xml(truncate("failed: " + row.failure, 90)) + "</text></g>\n";
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
  std::string value = fmt::ratio(*row.speedup) + " " + to_string(row.verdict) +
                      (row.throttled_arms.empty() ? "" : " (throttled)");
  o += "<text x=\"" + num(x.x1 + 8) + "\" y=\"" + num(cy + 4) + "\" fill=\"" +
       fill_of(row.verdict) + "\">" + xml(value) + "</text>";
  return o + "</g>\n";
}

}  // namespace

std::string render_svg(const Report& r, const RenderOptions&) {
  const double plot_h = kRowH * static_cast<double>(std::max<std::size_t>(r.shapes.size(), 1));
  const svg::Scale x = make_scale(r, kLabelW, kWidth - kValueW);
  std::string o = header(r, kTop + plot_h + kBottom) + legend(r);
  o += svg::speedup_axis(x, r.stats.noise_band, kTop, plot_h);  // noise band, grid and axis
  for (std::size_t i = 0; i < r.shapes.size(); ++i)
    o += shape_row(r, r.shapes[i], x, kTop + kRowH * static_cast<double>(i));
  return o + "</svg>\n";
}

}  // namespace abh
