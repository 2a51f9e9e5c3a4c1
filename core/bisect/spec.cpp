#include "bisect/spec.hpp"

#include "system/error.hpp"
#include "system/json_schema.hpp"

namespace abh::bisect {
namespace fs = std::filesystem;

json to_json(const BisectCommit& c) {
  return json{{"sha", c.sha}, {"subject", c.subject}};
}

json to_json(const BisectSpec& s) {
  json commits = json::array();
  for (const auto& c : s.commits) commits.push_back(to_json(c));
  json j{{"schema_version", s.schema_version},
         {"id", s.id},
         {"good", s.good_requested},
         {"bad", s.bad_requested},
         {"commits", commits},
         {"repo", s.repo},
         {"target", s.target},
         {"shapes", s.shapes},
         {"python", s.python},
         {"gpus", s.gpus},
         {"cpus", s.cpus},
         {"start_ahead", s.start_ahead},
         {"until_decided", s.until_decided},
         {"settings", abh::to_json(s.settings)},
         {"stats", abh::to_json(s.stats)},
         {"argv", s.argv}};
  if (s.share_host) j["share_host"] = true;  // absent otherwise: earlier specs keep their bytes
  return j;
}

BisectSpec bisect_spec_from_json(const json& j, const std::string& where) {
  check_schema(j, "bisect", where);
  BisectSpec s;
  s.schema_version = schema_version(j, where, 1, "bisect");
  s.id = field<std::string>(j, "id", where);
  s.good_requested = field<std::string>(j, "good", where);
  s.bad_requested = field<std::string>(j, "bad", where);
  for (const auto& c : array_field(j, "commits", where))
    s.commits.push_back({field<std::string>(c, "sha", where + ".commits"),
                         field<std::string>(c, "subject", where + ".commits")});
  s.repo = field<std::string>(j, "repo", where);
  s.target = field<std::string>(j, "target", where);
  s.shapes = string_array(j, "shapes", where);
  s.python = field<std::string>(j, "python", where);
  s.gpus = field<std::string>(j, "gpus", where);
  s.cpus = field<std::string>(j, "cpus", where);
  s.start_ahead = field<std::string>(j, "start_ahead", where);
  s.until_decided = field<std::string>(j, "until_decided", where);
  s.share_host = field_or<bool>(j, "share_host", where, false);
  s.settings = measure_settings_from_json(object_field(j, "settings", where), where + ".settings");
  s.stats = stats_options_from_json(object_field(j, "stats", where), where + ".stats");
  s.argv = string_array(j, "argv", where);
  return s;
}

fs::path spec_path(const fs::path& dir) {
  return dir / "bisect.json";
}

bool is_bisect_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(spec_path(dir), ec);
}

BisectSpec load_spec(const fs::path& dir) {
  const fs::path p = spec_path(dir);
  return bisect_spec_from_json(read_json_file(p), p.string());
}

}  // namespace abh::bisect
