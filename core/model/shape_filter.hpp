// `run --shapes`: which of a grid's shapes a run plans, as a comma-separated list of shape ids or
// shell-style patterns (fnmatch(3): `*`, `?`, `[...]`), e.g. `m1_*,m4096_n6656_k19968_bf16`.
// Every pattern must match at least one shape: a typo in one must not silently shrink the run.
// The plan records the patterns (plan.hpp) and holds only the shapes they select, so resume,
// verify and report see the filtered sweep.
#pragma once

#include <string>
#include <vector>

#include "model/grid.hpp"

namespace abh {

// The patterns of `text`, in order. Empty `text`: none (every shape). UsageError naming --shapes
// for an empty item ("a,,b" or a trailing comma).
std::vector<std::string> parse_shape_filter(const std::string& text);

// Whether `id` matches `pattern` (fnmatch(3) without flags: `*` also matches '.' and '/').
bool shape_matches(const std::string& id, const std::string& pattern);

// The shapes of `shapes` (from the grid file `grid`) that match any pattern, in the grid's order;
// all of them when `patterns` is empty. UsageError naming --shapes, every pattern that matches no
// shape, and the grid's first ids, when one does.
std::vector<Shape> filter_shapes(const std::vector<Shape>& shapes,
                                 const std::vector<std::string>& patterns, const std::string& grid);

}  // namespace abh
