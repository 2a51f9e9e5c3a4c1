// Fractions as the user types them on the command line: 0.005 or 0.5%.
#pragma once

#include <string>
#include <string_view>

namespace abh {

// The value of a fraction option: "0.005" and "0.5%" are both 0.005. A bare value above 1 (95 for
// a confidence, 2 for a noise band) is almost always a percentage without its sign, so it is
// refused (UsageError) with both spellings of what was probably meant ("write 95% or 0.95")
// rather than read as 9500%. Text that is not a number, or is not finite, is refused too.
double parse_fraction(std::string_view text);

// The shortest text that reads back as the same double (0.005, not 0.005000000000000000104).
std::string fraction_text(double v);

}  // namespace abh
