// Small text helpers shared by error messages and renderers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace abh {

// The items with `sep` between each two: join({"a", "b"}, ", ") is "a, b"; no items give "".
std::string join(const std::vector<std::string>& items, std::string_view sep);

}  // namespace abh
