// A grid is the list of shapes a sweep measures, read from a JSON file:
//   { "schema_version": 1,
//     "shapes": [ { "id": "m128_n4096_k4096", "params": { "m": 128, "n": 4096, "k": 4096 } } ] }
// `params` is passed to the plugin as it is; `id` names the shape's result directory, so it is
// restricted to [A-Za-z0-9._-] and may not start with a dot (it cannot escape the run directory).
// An entry without "id" gets one made from its params.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "system/json_io.hpp"

namespace abh {

struct Shape {
  std::string id;
  std::string label;  // optional human label, e.g. "fc1 fprop"
  json params;        // plugin-defined problem parameters (a JSON object)
  // A plan's shape: what is timed (model/timing.hpp), always set; empty in a grid.
  std::string timing;
  bool operator==(const Shape&) const = default;
};

struct Grid {
  int schema_version = 1;
  std::vector<Shape> shapes;
};

Grid load_grid(const std::filesystem::path& path);
Grid grid_from_json(const json& j, const std::string& where);
json to_json(const Grid& g);
json to_json(const Shape& s);
Shape shape_from_json(const json& j, const std::string& where);

// Throws when `id` could escape a directory or collide with our own files.
void check_safe_name(const std::string& id, const std::string& what);
std::string shape_id_from_params(const json& params);

}  // namespace abh
