// Small text helpers shared by error messages and renderers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace abh {

// The items with `sep` between each two: join({"a", "b"}, ", ") is "a, b"; no items give "".
std::string join(const std::vector<std::string>& items, std::string_view sep);

// User text as a message shows it: control characters (NUL, newline, escape, DEL) and bytes that
// are not UTF-8 become \0, \n, \t, \r, \\ and \xNN escapes, so a message that quotes a hostile
// name stays one line, is never cut at a NUL and never moves a terminal's cursor. Valid UTF-8
// (é, 漢) is kept as it is.
std::string printable(std::string_view s);
// printable(s) in single quotes, the form error messages quote names, ids and values in.
std::string quote(std::string_view s);
// An argv as a POSIX shell would read it back: each word printable() and, unless it is made of
// ASCII letters, digits, _./:=@%+,- and UTF-8 beyond ASCII only, in single quotes ('\'' for a quote
// inside), so a command a report shows runs as it ran when pasted (no pipe, substitution or split
// word).
std::string shell_command(const std::vector<std::string>& argv);

// The offset of the first byte of `s` that is not part of well-formed UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF count as malformed), or npos when all of it is.
std::size_t invalid_utf8_at(std::string_view s);

// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: "rnu" is 1 from
// "run".
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate a mistyped `word` most likely meant, for "did you mean": the one candidate that
// `word` begins (--base for --baseline), else the nearest within a third of the word's length (at
// least 2 edits), else "" when none is near enough to be worth suggesting.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace abh
