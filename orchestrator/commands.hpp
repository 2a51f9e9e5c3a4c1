// Subcommands registered by main.cpp, one function per command family. The commands that run and
// report sweeps are in run_command.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

// `abharness grid`: writes a grid file from a model preset / hyperparameters or explicit shapes.
void add_grid_command(CLI::App& app);
// `abharness roofline`: prints each shape's speed-of-light time on a named GPU.
void add_roofline_command(CLI::App& app);

namespace abh {
// `abharness completion bash|zsh|fish`: the completion script of `app`'s commands
// (cmd_completion.cpp, completion.hpp), and the hidden `complete-targets` the scripts call.
void add_completion_command(CLI::App& app);
// `abharness compare RUN_DIR...`: finished runs side by side (cmd_compare.cpp).
void add_compare_command(CLI::App& app, int& exit_code);
// `abharness export RUN --format bmf|pytest-benchmark` (cmd_export.cpp, report/export.hpp).
void add_export_command(CLI::App& app, int& exit_code);
// `abharness history RUN... --out DIR`: a static HTML page of runs over commits (cmd_history.cpp,
// report/history.hpp).
void add_history_command(CLI::App& app, int& exit_code);
}  // namespace abh
