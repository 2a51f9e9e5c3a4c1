// Options that take a fraction accept it as 0.02 or as 2% (system/fraction.hpp); a bare value
// above 1 is refused while the command line is parsed, before anything is built.
#pragma once

#include <CLI/CLI.hpp>
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

}  // namespace abh
