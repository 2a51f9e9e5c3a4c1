// SVG pieces shared by the charts (render_svg.cpp, and the comparison's in render_comparison.cpp):
// escaping, numbers, text that fits its room, and the speedup axis with its ticks.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace abh::svg {

// Text and attribute values: on one line (fmt::one_line also replaces the control characters that
// XML 1.0 forbids), with the five XML special characters escaped.
std::string xml(const std::string& raw);
std::string num(double v);  // two decimals: coordinates

// Text measured without a font: SVG has no text metrics, and a renderer may substitute any
// sans-serif. kCharEm is the widest average advance of the common sans-serif fonts (DejaVu Sans's
// digits and lower case: 0.55-0.64 em), so text cut to it fits in each of them.
inline constexpr double kCharEm = 0.62;
std::size_t chars_that_fit(double width_px, double font_px);
// `s` cut to at most `n` characters (UTF-8 code points), the last one an ellipsis when cut.
std::string truncate(const std::string& s, std::size_t n);
// A <text> element at (x, y) showing `s` cut to `width_px`; when it was cut, the whole of `s` is
// its <title> (the tooltip of every SVG viewer). `attrs` are more attributes, " "-led.
std::string fitted_text(const std::string& s, double x, double y, double width_px, double font_px,
                        const std::string& attrs = "");
// `s` broken at spaces into lines of at most `width_px` (a word longer than a line is cut).
std::vector<std::string> wrap(const std::string& s, double width_px, double font_px);

// A logarithmic map from [lo, hi] (speedups, > 0) to [x0, x1] (pixels): 2x and 0.5x lie equally
// far from 1, and a 10x outlier does not flatten the shapes around 1.
struct Scale {
  double lo, hi, x0, x1;
  double operator()(double v) const {
    const double t = std::log(std::max(v, lo) / lo) / std::log(hi / lo);
    return x0 + std::min(t, 1.0) * (x1 - x0);
  }
};
// The scale that shows every value of `v`, 1.0 and the noise band, with a margin.
Scale speedup_scale(std::vector<double> v, double noise_band, double x0, double x1);
// The tick values of `x`: 1, 2, 5 per decade on a wide range, finer steps on a narrow one, and no
// two closer than a label's width (1.0 is always one).
std::vector<double> speedup_ticks(const Scale& x);
// The shaded noise band, the vertical grid with tick labels ("1.05x"), the axis title and the
// reference line at 1.0, over a plot from `top` to `top + height`.
std::string speedup_axis(const Scale& x, double noise_band, double top, double height);

}  // namespace abh::svg
