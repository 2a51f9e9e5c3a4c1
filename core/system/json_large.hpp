// Large JSON documents written one element at a time. A plan of 50,000 shapes holds 200,000
// shapes and tasks (34 MB) and its report 50,000 rows (120 MB); made into one json value before
// being dumped, the value's nodes cost more than the text (writing the plan was 38 % of the time
// to the first arm, report.json half of `report`: perf on a 2-core VM). Here only a document's
// small members are a json value; each element of its large top-level arrays is made, written and
// freed in turn. The text is byte for byte what json::dump(2) gives the whole document, and the
// digest the same as Sha256 over canonical() of it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "system/json_io.hpp"
#include "system/sha256.hpp"

namespace abh {

// One large top-level array of a document: its key and its elements, made on demand.
struct LargeArray {
  std::string key;
  std::size_t size = 0;
  std::function<json(std::size_t)> element;
};

// canonical(value) fed into `digest`, an array's elements one at a time: the same bytes without
// the whole text at once (the tasks of a 50,000-shape plan are 20 MB of it).
void update_canonical(Sha256& digest, const json& value);

// The elements of each array as the pretty text holds them (between its "[" and "]"), in the order
// of `arrays`. With `digest`, the canonical text of `object` with the arrays' elements in their
// members (`object` holds them as empty arrays), except its member `skip` (a document's own digest
// field), is fed into it on the way: each element is made once for both.
std::vector<std::string> large_bodies(const json& object, const std::vector<LargeArray>& arrays,
                                      Sha256* digest = nullptr, const std::string& skip = "");

// json::dump(2) of `object` with the bodies of large_bodies spliced into the arrays' members.
std::string splice_pretty(const json& object, const std::vector<LargeArray>& arrays,
                          const std::vector<std::string>& bodies);

}  // namespace abh
