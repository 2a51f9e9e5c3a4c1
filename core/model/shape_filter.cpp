#include "model/shape_filter.hpp"

#include <fnmatch.h>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

namespace {

// How many of the grid's ids a "matches no shape" error lists: enough to show the naming scheme.
constexpr size_t kIdsShown = 5;

std::string some_ids(const std::vector<Shape>& shapes) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < shapes.size() && i < kIdsShown; ++i) ids.push_back(shapes[i].id);
  std::string out = join(ids, ", ");
  if (shapes.size() > kIdsShown)
    out += " and " + std::to_string(shapes.size() - kIdsShown) + " more";
  return out;
}

}  // namespace

std::vector<std::string> parse_shape_filter(const std::string& text) {
  std::vector<std::string> patterns;
  if (text.empty()) return patterns;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      throw UsageError("--shapes " + quote(text) +
                       ": an empty pattern (two commas, or one at an end); give shape ids or "
                       "patterns separated by single commas, e.g. m1_*,m4096_n4096_k4096");
    patterns.push_back(item);
    if (comma == std::string::npos) return patterns;
    start = comma + 1;
  }
}

bool shape_matches(const std::string& id, const std::string& pattern) {
  return ::fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
}

std::vector<Shape> filter_shapes(const std::vector<Shape>& shapes,
                                 const std::vector<std::string>& patterns,
                                 const std::string& grid) {
  if (patterns.empty()) return shapes;
  std::vector<Shape> kept;
  std::vector<bool> used(patterns.size(), false);
  for (const Shape& s : shapes) {
    bool keep = false;
    for (size_t i = 0; i < patterns.size(); ++i)
      if (shape_matches(s.id, patterns[i])) keep = used[i] = true;
    if (keep) kept.push_back(s);
  }
  std::vector<std::string> unused;
  for (size_t i = 0; i < patterns.size(); ++i)
    if (!used[i]) unused.push_back(quote(patterns[i]));
  if (!unused.empty())
    throw UsageError("--shapes " + quote(join(patterns, ",")) + ": " +
                     (unused.size() == 1 ? "pattern " : "patterns ") + join(unused, ", ") +
                     " match" + (unused.size() == 1 ? "es" : "") + " no shape of the grid " +
                     quote(grid) + " (its ids: " + some_ids(shapes) +
                     "); give shape ids or fnmatch patterns such as m1_*");
  return kept;
}

}  // namespace abh
