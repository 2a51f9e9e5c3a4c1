// What the command line probably meant, said after CLI11 refuses it: "did you mean 'run'" for a
// mistyped command, "did you mean --baseline" for a mistyped option; and `abharness help <verb>`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace abh {

// `abharness help` and `abharness help <verb>` as the arguments CLI11 understands: `--help` and
// `<verb> --help` (an unknown verb: `<verb>` alone, refused as any unknown command is); any
// other command line is returned as it is.
std::vector<std::string> expand_help_verb(const CLI::App& app, std::vector<std::string> args);

// Refuses (UsageError) an option written with an empty value, "--baseline=": CLI11 would take
// the next word as its value and refuse a later one, far from the mistake.
void refuse_empty_values(const std::vector<std::string>& args);

// One line per word of a refused command line that names no command or option of `app` (as
// parsed so far), each with the nearest that does where one is near ("" when there is none).
std::string did_you_mean(const CLI::App& app);

}  // namespace abh
