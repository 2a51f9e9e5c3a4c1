// Fraction options typed as 0.02 or 2%.
#include <doctest/doctest.h>

#include "system/error.hpp"
#include "system/fraction.hpp"

using namespace abh;

TEST_CASE("fraction: a plain fraction and a percentage give the same value") {
  CHECK(parse_fraction("0.005") == doctest::Approx(0.005));
  CHECK(parse_fraction("0.5%") == doctest::Approx(0.005));
  CHECK(parse_fraction("95%") == doctest::Approx(0.95));
  CHECK(parse_fraction("0") == 0);
  CHECK(parse_fraction("1") == 1);
  CHECK(parse_fraction("0%") == 0);
}

TEST_CASE("fraction: a bare value above 1 is refused with both spellings of the fix") {
  CHECK_THROWS_WITH_AS(parse_fraction("2"),
                       "'2' is a fraction above 1; if a percentage was meant, write 2% or 0.02",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_fraction("95"), doctest::Contains("write 95% or 0.95"), UsageError);
  CHECK_THROWS_WITH_AS(parse_fraction("1.5"), doctest::Contains("write 1.5% or 0.015"), UsageError);
}

TEST_CASE("fraction: text that is not a whole number is refused") {
  for (const char* bad : {"", "%", "abc", "0.5x", "0.5 %", "%5", "nan", "inf", "1e999"})
    CHECK_THROWS_WITH_AS(parse_fraction(bad), doctest::Contains("is not a number"), UsageError);
}

TEST_CASE("fraction: the text of a value reads back as the same value") {
  CHECK(fraction_text(0.005) == "0.005");
  CHECK(fraction_text(0.95) == "0.95");
  CHECK(parse_fraction(fraction_text(0.1 + 0.2)) == 0.1 + 0.2);
}
