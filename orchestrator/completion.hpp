// Shell completion, generated from the command definitions themselves so that it cannot fall
// behind them: each command's options, the fixed values of an option that takes one of a set, the
// plugin targets of the kernel repository for --target (asked of `abharness complete-targets` as
// the user types), and directories for run directories. cmd_completion.cpp reads the model out of
// CLI11 and writes the bash script; completion_shells.cpp writes the zsh and fish ones.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace abh {

// What the value of an option (or a positional argument) completes to.
enum class ValueKind {
  none,       // a flag: no value
  fixed,      // one of CompletionOption::values
  target,     // a target of the repository's abharness.json (--target)
  directory,  // a directory (a run directory, --out, --runs-root)
  file        // anything else: file names, as the shell would offer without a script
};

struct CompletionOption {
  std::vector<std::string> names;  // "-q", "--quiet"
  std::string help;                // one line
  ValueKind kind = ValueKind::none;
  std::vector<std::string> values;  // kind fixed
};

struct CompletionCommand {
  std::string name, help;
  std::vector<CompletionOption> options;
  // The positional arguments, if any (a run directory, two runs, a shell name).
  ValueKind positional = ValueKind::none;
  std::vector<std::string> positional_values;
};

// The visible commands of `app`, in definition order.
std::vector<CompletionCommand> completion_commands(CLI::App& app);

// The hidden command the scripts call for --target: the repository whose manifest holds them.
inline constexpr const char* kCompleteTargets = "complete-targets";

std::string bash_completion(CLI::App& app);
std::string zsh_completion(CLI::App& app);
std::string fish_completion(CLI::App& app);

}  // namespace abh
