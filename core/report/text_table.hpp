// An aligned plain-text table for terminals (render_terminal.cpp, render_comparison.cpp): the first
// column reads left to right, the others (numbers) align on the right, and the last one is text
// (a verdict) unless the caller says it holds numbers too.
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
enum class LastColumn { text, numbers };
std::string render(const std::vector<std::vector<Cell>>& rows, bool colour,
                   LastColumn last = LastColumn::text);

}  // namespace abh::text_table
