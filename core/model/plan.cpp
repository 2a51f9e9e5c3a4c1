#include "model/plan.hpp"

#include "system/error.hpp"
#include "system/version.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

json to_json(const Variant& v) {
  return json{{"name", v.name},
              {"source", abh::to_json(v.source)},
              {"recipe", abh::to_json(v.recipe)},
              {"plugin", v.plugin},
              {"plugin_sha256", v.plugin_sha256},
              {"build_cache_key", v.build_cache_key},
              {"toolchain_id", v.toolchain_id},
              {"device", v.device},
              {"libraries", v.libraries}};
}

BuildRecipe recipe_from_json(const json& j, const std::string& where) {
  BuildRecipe r;
  r.target = field<std::string>(j, "target", where);
  r.argv = string_array(j, "argv", where);
  r.artifact = field<std::string>(j, "artifact", where);
  for (auto it = object_field(j, "env", where).begin(); it != j.at("env").end(); ++it) {
    if (!it->is_string()) throw Error(where + ".env: field '" + it.key() + "': expected a string");
    r.env[it.key()] = it->get<std::string>();
  }
  r.shell = field<bool>(j, "shell", where);
  r.timeout_s = field<double>(j, "timeout_s", where);
  return r;
}

Variant variant_from_json(const json& j, const std::string& where) {
  Variant v;
  v.name = field<std::string>(j, "name", where);
  v.source = source_identity_from_json(object_field(j, "source", where), where + ".source");
  v.recipe = recipe_from_json(object_field(j, "recipe", where), where + ".recipe");
  v.plugin = field<std::string>(j, "plugin", where);
  v.plugin_sha256 = field<std::string>(j, "plugin_sha256", where);
  v.build_cache_key = field<std::string>(j, "build_cache_key", where);
  v.toolchain_id = field<std::string>(j, "toolchain_id", where);
  v.device = field<std::string>(j, "device", where);
  if (v.device != "cpu" && v.device != "cuda")
    throw Error(where + ": field 'device': '" + v.device + "' is neither cpu nor cuda");
  for (auto it = object_field(j, "libraries", where).begin(); it != j.at("libraries").end(); ++it) {
    if (!it->is_string())
      throw Error(where + ".libraries: field '" + it.key() + "': expected a string");
    v.libraries[it.key()] = it->get<std::string>();
  }
  return v;
}

json to_json(const Task& t) {
  return json{{"shape", t.shape}, {"arm", t.arm}, {"variant", t.variant},
              {"round", t.round}, {"gpu", t.gpu}, {"conditional", t.conditional},
              {"cpus", t.cpus}};
}

Task task_from_json(const json& j, const std::string& where) {
  Task t;
  t.shape = field<std::string>(j, "shape", where);
  t.arm = field<std::string>(j, "arm", where);
  t.variant = field<std::string>(j, "variant", where);
  t.round = field<int>(j, "round", where);
  t.gpu = field<int>(j, "gpu", where);
  t.conditional = field<bool>(j, "conditional", where);
  const json& cpus = array_field(j, "cpus", where);
  for (const auto& c : cpus) {
    if (!c.is_number_integer() || c.get<long long>() < 0 || c.get<long long>() > 1 << 20)
      throw Error(where + ": field 'cpus': every entry must be a CPU number (an integer >= 0)");
    t.cpus.push_back(c.get<int>());
  }
  if (t.cpus.empty())
    throw Error(where + ": field 'cpus': empty; the plan must say where the arm runs");
  check_safe_name(t.shape, where + ": shape");
  check_safe_name(t.arm, where + ": arm");
  return t;
}

}  // namespace

const Variant& Plan::variant(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return v;
  throw Error("plan " + run_id + " has no variant '" + name + "'");
}

const Shape& Plan::shape(const std::string& id) const {
  for (const auto& s : shapes)
    if (s.id == id) return s;
  throw Error("plan " + run_id + " has no shape '" + id + "'");
}

const Task* Plan::find_task(const std::string& shape, const std::string& arm) const {
  for (const auto& t : tasks)
    if (t.shape == shape && t.arm == arm) return &t;
  return nullptr;
}

json to_json(const Plan& p) {
  json variants = json::array(), shapes = json::array(), tasks = json::array(),
       machine = json::array();
  for (const auto& v : p.variants) variants.push_back(to_json(v));
  for (const auto& s : p.shapes) shapes.push_back(abh::to_json(s));
  for (const auto& t : p.tasks) tasks.push_back(to_json(t));
  for (const auto& m : p.machine) machine.push_back(abh::to_json(m));
  return json{{"schema_version", p.schema_version},
              {"harness_version", p.harness_version},
              {"run_id", p.run_id},
              {"created_at", p.created_at},
              {"repo", p.repo},
              {"plugin_target", p.plugin_target},
              {"command", p.command},
              {"worker_sha256", p.worker_sha256},
              {"variants", variants},
              {"shapes", shapes},
              {"settings", abh::to_json(p.settings)},
              {"schedule", abh::to_json(p.schedule)},
              {"tasks", tasks},
              {"machine", machine},
              {"placement_notes", p.placement_notes}};
}

Plan plan_from_json(const json& j, const std::string& where) {
  Plan p;
  p.schema_version =
      schema_version(j, where, kPlanSchemaVersion, "plan",
                     "re-run the sweep with this version or use the abharness that wrote it");
  p.harness_version = field<std::string>(j, "harness_version", where);
  p.run_id = field<std::string>(j, "run_id", where);
  p.created_at = field<std::string>(j, "created_at", where);
  p.repo = field<std::string>(j, "repo", where);
  p.plugin_target = field<std::string>(j, "plugin_target", where);
  p.command = string_array(j, "command", where);
  p.worker_sha256 = field<std::string>(j, "worker_sha256", where);
  const auto& vs = array_field(j, "variants", where);
  for (size_t i = 0; i < vs.size(); ++i)
    p.variants.push_back(variant_from_json(vs[i], where + ".variants[" + std::to_string(i) + "]"));
  const auto& ss = array_field(j, "shapes", where);
  for (size_t i = 0; i < ss.size(); ++i)
    p.shapes.push_back(shape_from_json(ss[i], where + ".shapes[" + std::to_string(i) + "]"));
  p.settings = measure_settings_from_json(object_field(j, "settings", where), where + ".settings");
  p.schedule = schedule_options_from_json(object_field(j, "schedule", where), where + ".schedule");
  const auto& ts = array_field(j, "tasks", where);
  for (size_t i = 0; i < ts.size(); ++i)
    p.tasks.push_back(task_from_json(ts[i], where + ".tasks[" + std::to_string(i) + "]"));
  p.placement_notes = string_array(j, "placement_notes", where);
  const auto& ms = array_field(j, "machine", where);
  for (size_t i = 0; i < ms.size(); ++i)
    p.machine.push_back(
        environment_from_json(ms[i], where + ".machine[" + std::to_string(i) + "]"));
  for (const auto& t : p.tasks) {
    if (t.gpu < 0 || static_cast<size_t>(t.gpu) >= p.machine.size())
      throw Error(where + ": task " + t.shape + "/" + t.arm + " names machine entry " +
                  std::to_string(t.gpu) + " that the plan does not have");
    p.variant(t.variant);
    p.shape(t.shape);
  }
  return p;
}

fs::path plan_path(const fs::path& run_dir) {
  return run_dir / "plan.json";
}

Plan load_plan(const fs::path& run_dir) {
  fs::path p = plan_path(run_dir);
  if (!fs::exists(p))
    throw UsageError(run_dir.string() + " is not an abharness run directory (no plan.json)");
  return plan_from_json(read_json_file(p), p.string());
}

fs::path result_path(const fs::path& run_dir, const Task& t) {
  return run_dir / "results" / t.shape / (t.arm + ".json");
}

fs::path log_path(const fs::path& run_dir, const Task& t, const std::string& ext) {
  return run_dir / "logs" / t.shape / (t.arm + "." + ext);
}

}  // namespace abh
