// Subcommands registered by main.cpp, one function per command family.
#pragma once

#include <CLI/CLI.hpp>

// `abharness grid`: writes a grid file from a model preset / hyperparameters or explicit shapes.
void add_grid_command(CLI::App& app);
// `abharness roofline`: prints each shape's speed-of-light time on a named GPU.
void add_roofline_command(CLI::App& app);
