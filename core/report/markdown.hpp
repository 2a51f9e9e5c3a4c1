// GitHub-flavoured Markdown pieces shared by the Markdown renderers (render_markdown.cpp,
// render_pr.cpp, the comparison's): text that cannot break a line, a table or the formatting
// around it.
#pragma once

#include <string>

namespace abh::markdown {

// Text in a table cell or a sentence, on one line: characters Markdown would interpret are
// escaped, and '|' is escaped so that it cannot split a table cell.
std::string esc(const std::string& s);
// A code span: fenced with more backticks than the text contains in a row. '|' is escaped even
// here, because GFM splits table cells before it parses code spans.
std::string code(const std::string& s);

}  // namespace abh::markdown
