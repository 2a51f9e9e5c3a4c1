// GitHub-flavoured Markdown pieces shared by the Markdown renderers (render_markdown.cpp,
// render_pr.cpp, the comparison's): text that cannot break a line, a table or the formatting
// around it.
#pragma once

#include <string>

namespace abh::markdown {

// What esc() puts after the '@' of "@name", the '#' of "#123" and the "GH-" of "GH-123": a
// zero-width space, written as its HTML entity.
inline constexpr const char* kNoReference = "&#8203;";

// Text in a table cell or a sentence, on one line: characters Markdown would interpret are
// escaped, '|' is escaped so that it cannot split a table cell, and what GitHub would turn into a
// mention or an issue reference (a label or an exception's text quoting "@user" or "#123") is
// kept from becoming one. A code span needs none of this: GitHub finds no references inside one.
std::string esc(const std::string& s);
// A code span: fenced with more backticks than the text contains in a row. '|' is escaped even
// here, because GFM splits table cells before it parses code spans.
std::string code(const std::string& s);

}  // namespace abh::markdown
