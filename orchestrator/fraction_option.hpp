// Options that take a fraction accept it as 0.02 or as 2% (system/fraction.hpp); a bare value
// above 1 is refused while the command line is parsed, before anything is built. A seed is an
// unsigned number, refused when negative.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "system/error.hpp"
#include "system/fraction.hpp"

namespace abh {

inline CLI::Option* add_fraction_option(CLI::App& c, const std::string& name, double& value,
                                        const std::string& description) {
  // The transform rewrites "2%" to "0.02" before CLI11 converts the text; its message comes back
  // prefixed with the flag's name.
  CLI::Validator fraction(
      [](std::string& text) {
        try {
          text = fraction_text(parse_fraction(text));
          return std::string();
        } catch (const UsageError& e) {
          return std::string(e.what());
        }
      },
      "", "fraction");
  return c.add_option(name, value, description + " (a fraction: 0.02 or 2%)")->transform(fraction);
}

// An unsigned seed: CLI11 would turn -1 into 18446744073709551615 without a word.
inline CLI::Option* add_seed_option(CLI::App& c, const std::string& name, std::uint64_t& value,
                                    const std::string& description) {
  CLI::Validator not_negative(
      [](std::string& text) {
        return !text.empty() && text[0] == '-' ? "a seed is a whole number >= 0, not " + text
                                               : std::string();
      },
      "", "not negative");
  return c.add_option(name, value, description)->check(not_negative)->capture_default_str();
}

}  // namespace abh
