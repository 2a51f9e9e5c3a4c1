#include "model/grid.hpp"

#include <set>

#include "system/error.hpp"
#include "system/json_schema.hpp"
#include "system/text.hpp"

namespace abh {

void check_safe_name(const std::string& id, const std::string& what) {
  auto fail = [&](const std::string& why) {
    throw Error(what + " " + quote(id) + " " + why +
                ": use 1-100 characters of [A-Za-z0-9._-], not starting with '.'");
  };
  if (id.empty() || id.size() > 100) fail("has a bad length");
  if (id[0] == '.') fail("starts with a dot");
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) fail("contains a character that is not allowed");
  }
}

std::string shape_id_from_params(const json& params) {
  std::string id;
  for (const char* k : {"m", "n", "k"})
    if (params.contains(k) && params[k].is_number_integer())
      id += (id.empty() ? "" : "_") + std::string(k) + std::to_string(params[k].get<long long>());
  for (const char* k : {"dtype", "precision"})
    if (params.contains(k) && params[k].is_string()) id += "_" + params[k].get<std::string>();
  if (id.empty())
    throw Error("cannot derive a shape id from params " + params.dump() + ": give \"id\"");
  return id;
}

Shape shape_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  Shape s;
  s.params = object_field(j, "params", where);
  s.id = j.contains("id") ? field<std::string>(j, "id", where) : shape_id_from_params(s.params);
  s.label = field_or<std::string>(j, "label", where, "");
  check_safe_name(s.id, where + ": shape id");
  return s;
}

json to_json(const Shape& s) {
  json j{{"id", s.id}, {"params", s.params}};
  if (!s.label.empty()) j["label"] = s.label;
  if (!s.timing.empty()) j["timing"] = s.timing;
  return j;
}

Grid grid_from_json(const json& j, const std::string& where) {
  // The schema (schemas/grid.schema.json) says what a grid is; what it cannot say is checked here.
  check_schema(j, "grid", where);
  Grid g;
  g.schema_version = j.at("schema_version").get<int>();
  std::set<std::string> seen;
  const json& shapes = j.at("shapes");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string at = where + ": /shapes/" + std::to_string(i);
    Shape s = shape_from_json(shapes[i], at);
    if (!seen.insert(s.id).second)
      throw UsageError(at + ": duplicate shape id '" + s.id +
                       "'; fix: give each shape a unique \"id\"");
    g.shapes.push_back(std::move(s));
  }
  return g;
}

Grid load_grid(const std::filesystem::path& path) {
  try {
    return grid_from_json(read_json_file(path, JsonLimits{16u << 20, 32}), path.string());
  } catch (const Error& e) {
    throw UsageError(std::string("grid: ") + e.what());
  }
}

json to_json(const Grid& g) {
  json shapes = json::array();
  for (const auto& s : g.shapes) shapes.push_back(to_json(s));
  return json{{"schema_version", g.schema_version}, {"shapes", shapes}};
}

}  // namespace abh
