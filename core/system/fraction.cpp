#include "system/fraction.hpp"

#include <charconv>
#include <cmath>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

namespace {

// The whole of `s` as a finite double, or NaN.
double whole_number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    return std::nan("");
  return v;
}

}  // namespace

std::string fraction_text(double v) {
  char b[32];
  auto [end, ec] = std::to_chars(b, b + sizeof b, v);
  return ec == std::errc() ? std::string(b, end) : std::to_string(v);
}

double parse_fraction(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  const double v = whole_number(percent ? text.substr(0, text.size() - 1) : text);
  if (std::isnan(v))
    throw UsageError(quote(text) + " is not a number: give a fraction (0.02) or a percentage (2%)");
  if (percent) return v / 100;
  if (v > 1)
    throw UsageError(quote(text) + " is a fraction above 1; if a percentage was meant, write " +
                     fraction_text(v) + "% or " + fraction_text(v / 100));
  return v;
}

}  // namespace abh
