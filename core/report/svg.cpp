// The SVG pieces the charts share (svg.hpp): escaping, fitted text and the logarithmic speedup
// axis.
#include "report/svg.hpp"

#include <algorithm>
#include <cmath>

#include "report/report_render.hpp"

namespace abh::svg {

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

std::size_t chars_that_fit(double width_px, double font_px) {
  return static_cast<std::size_t>(std::max(1.0, std::floor(width_px / (font_px * kCharEm))));
}

namespace {

// Byte offsets where each UTF-8 code point of `s` starts.
std::vector<std::size_t> code_points(const std::string& s) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  return starts;
}

}  // namespace

std::string truncate(const std::string& s, std::size_t n) {
  const auto starts = code_points(s);
  if (starts.size() <= n) return s;
  return s.substr(0, starts[n > 0 ? n - 1 : 0]) + "\u2026";
}

std::string fitted_text(const std::string& s, double x, double y, double width_px, double font_px,
                        const std::string& attrs) {
  const std::string line = fmt::one_line(s);
  const std::string shown = truncate(line, chars_that_fit(width_px, font_px));
  std::string o = "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + attrs + ">";
  if (shown != line) o += "<title>" + xml(line) + "</title>";
  return o + xml(shown) + "</text>";
}

std::vector<std::string> wrap(const std::string& s, double width_px, double font_px) {
  const std::size_t n = chars_that_fit(width_px, font_px);
  std::vector<std::string> lines;
  std::string line;
  std::size_t from = 0;
  const std::string text = fmt::one_line(s);
  while (from <= text.size()) {
    std::size_t to = text.find(' ', from);
    if (to == std::string::npos) to = text.size();
    const std::string word = text.substr(from, to - from);
    const std::string joined = line.empty() ? word : line + " " + word;
    if (code_points(joined).size() <= n || line.empty()) {
      line = joined;
    } else {
      lines.push_back(line);
      line = word;
    }
    from = to + 1;
  }
  if (!line.empty()) lines.push_back(line);
  for (auto& l : lines) l = truncate(l, n);
  return lines;
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

// Just enough decimals to write `t` exactly: 0.05 -> "0.05", 2 -> "2", 1.25 -> "1.25".
std::string tick_label(double t) {
  int decimals = 0;
  while (decimals < 6 &&
         std::abs(t * std::pow(10, decimals) - std::round(t * std::pow(10, decimals))) > 1e-9)
    ++decimals;
  return fmt::fixed(t, decimals) + "x";
}

std::vector<double> candidate_ticks(const Scale& x) {
  std::vector<double> ticks;
  if (x.hi / x.lo < 3) {
    // Narrow: the axis is almost linear, so even steps read best.
    const double step = nice_step(x.hi - x.lo, 6);
    for (double k = std::ceil(x.lo / step); k * step <= x.hi; ++k)
      if (k > 0) ticks.push_back(k * step);  // a multiple of the step: no error accumulates
    return ticks;
  }
  for (int decade = static_cast<int>(std::floor(std::log10(x.lo))); std::pow(10, decade) <= x.hi;
       ++decade)
    for (double m : {1.0, 2.0, 5.0}) {
      const double t = m * std::pow(10, decade);  // tick_label absorbs 2 * 0.1's rounding
      if (t >= x.lo && t <= x.hi) ticks.push_back(t);
    }
  return ticks;
}

}  // namespace

Scale speedup_scale(std::vector<double> v, double band, double x0, double x1) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double d) { return !(d > 0); }), v.end());
  v.insert(v.end(), {1.0, 1 - band, 1 + band});
  const double lo = std::log(*std::min_element(v.begin(), v.end()));
  const double hi = std::log(*std::max_element(v.begin(), v.end()));
  const double pad = std::max((hi - lo) * 0.08, std::log(1.005));
  return {std::exp(lo - pad), std::exp(hi + pad), x0, x1};
}

std::vector<double> speedup_ticks(const Scale& x) {
  constexpr double kMinGapPx = 52;  // "0.125x" at 11 px and a margin
  std::vector<double> all = candidate_ticks(x), kept = {1.0};
  auto far_enough = [&](double t) {
    return std::all_of(kept.begin(), kept.end(),
                       [&](double k) { return std::abs(x(t) - x(k)) >= kMinGapPx; });
  };
  // Outward from 1.0, so the ticks next to the reference line are the ones kept.
  std::sort(all.begin(), all.end(),
            [](double a, double b) { return std::abs(std::log(a)) < std::abs(std::log(b)); });
  for (double t : all)
    if (far_enough(t)) kept.push_back(t);
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::string speedup_axis(const Scale& x, double band, double top, double plot_h) {
  std::string o;
  o += "<rect class=\"noise-band\" x=\"" + num(x(1 - band)) + "\" y=\"" + num(top) + "\" width=\"" +
       num(x(1 + band) - x(1 - band)) + "\" height=\"" + num(plot_h) + "\" fill=\"#e8e8e8\"/>\n";
  o += "<g class=\"axis\" font-size=\"11\" text-anchor=\"middle\">";
  for (double t : speedup_ticks(x)) {
    o += "<line x1=\"" + num(x(t)) + "\" y1=\"" + num(top) + "\" x2=\"" + num(x(t)) + "\" y2=\"" +
         num(top + plot_h) + "\" stroke=\"#f0f0f0\"/>";
    o += "<text x=\"" + num(x(t)) + "\" y=\"" + num(top + plot_h + 16) + "\">" + tick_label(t) +
         "</text>";
  }
  o += "</g>\n";
  o += "<text x=\"" + num((x.x0 + x.x1) / 2) + "\" y=\"" + num(top + plot_h + 36) +
       "\" text-anchor=\"middle\">speedup (log scale)</text>\n";
  o += "<line class=\"reference\" x1=\"" + num(x(1)) + "\" y1=\"" + num(top - 4) + "\" x2=\"" +
       num(x(1)) + "\" y2=\"" + num(top + plot_h) + "\" stroke=\"#000000\"/>\n";
  return o;
}

}  // namespace abh::svg
