// SVG pieces shared by the charts (render_svg.cpp, and the comparison's in render_comparison.cpp):
// escaping, numbers, and the speedup axis with its ticks.
#pragma once

#include <string>
#include <vector>

namespace abh::svg {

// Text and attribute values: on one line (fmt::one_line also replaces the control characters that
// XML 1.0 forbids), with the five XML special characters escaped.
std::string xml(const std::string& raw);
std::string num(double v);  // two decimals: coordinates
std::string truncate(const std::string& s, std::size_t n);

// A linear map from [lo, hi] (speedups) to [x0, x1] (pixels).
struct Scale {
  double lo, hi, x0, x1;
  double operator()(double v) const { return x0 + (v - lo) / (hi - lo) * (x1 - x0); }
};
// The scale that shows every value of `v`, 1.0 and the noise band, with a margin.
Scale speedup_scale(std::vector<double> v, double noise_band, double x0, double x1);
// The shaded noise band, the vertical grid with tick labels ("1.05x"), the axis title and the
// reference line at 1.0, over a plot from `top` to `top + height`.
std::string speedup_axis(const Scale& x, double noise_band, double top, double height);

}  // namespace abh::svg
