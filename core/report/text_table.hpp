// An aligned plain-text table for terminals (render_terminal.cpp, render_comparison.cpp): the first
// and last columns read left to right, the others (numbers) align on the right.
#pragma once

#include <string>
#include <vector>

namespace abh::text_table {

struct Cell {
  std::string text;
  const char* colour = "";  // an ANSI colour, applied after padding so alignment holds
};

// Display width in columns: UTF-8 continuation bytes (the "µ" of µs) take none.
std::size_t width(const std::string& s);
std::string render(const std::vector<std::vector<Cell>>& rows, bool colour);

}  // namespace abh::text_table
