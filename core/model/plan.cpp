#include "model/plan.hpp"

#include <algorithm>
#include <cstdint>
#include <random>

#include "model/plan_index.hpp"
#include "model/timing.hpp"
#include "system/error.hpp"
#include "system/file_lock.hpp"
#include "system/json_large.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"
#include "system/version.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

json to_json(const Variant& v) {
  json j{{"name", v.name},
         {"source", abh::to_json(v.source)},
         {"recipe", abh::to_json(v.recipe)},
         {"plugin", v.plugin},
         {"plugin_sha256", v.plugin_sha256},
         {"build_cache_key", v.build_cache_key},
         {"toolchain_id", v.toolchain_id},
         {"device", v.device},
         {"libraries", v.libraries}};
  // Written only when set: a plan of --baseline/--candidate is laid out as before variants files.
  if (!v.build.empty()) j["build"] = v.build;
  if (!v.run.empty()) j["run"] = v.run;
  return j;
}

BuildRecipe recipe_from_json(const json& j, const std::string& where) {
  BuildRecipe r;
  r.target = field<std::string>(j, "target", where);
  r.argv = string_array(j, "argv", where);
  r.artifact = field<std::string>(j, "artifact", where);
  if (j.contains("python")) r.python = python_plugin_from_json(j.at("python"), where + ".python");
  if (r.argv.empty() && !r.python)
    throw Error(where + ": field 'argv': a plugin that is not a Python plugin needs a build");
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
  if (j.contains("build"))
    for (auto it = object_field(j, "build", where).begin(); it != j.at("build").end(); ++it) {
      if (!it->is_string())
        throw Error(where + ".build: field '" + it.key() + "': expected a string");
      v.build[it.key()] = it->get<std::string>();
    }
  if (j.contains("run")) v.run = object_field(j, "run", where);
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
  check_plan_shape_id(t.shape, where + ": shape");
  check_safe_name(t.arm, where + ": arm");
  return t;
}

// The planner places every arm on the planning machine; a launcher that places lanes leaves that
// to each lane on its node, where the planning machine's CPU numbers mean nothing.
void check_task_cpus(const Plan& p, size_t i, const std::string& where) {
  const std::string at = where + ".tasks[" + std::to_string(i) + "]: field 'cpus': ";
  const bool on_node = launcher_places_lanes(p.launcher);
  if (on_node && !p.tasks[i].cpus.empty())
    throw Error(at + "must be empty with the " + p.launcher.name +
                " launcher: each lane chooses the CPUs on its node");
  if (!on_node && p.tasks[i].cpus.empty())
    throw Error(at + "empty; the plan must say where the arm runs");
}

// A plan's shape: a grid shape with the timing it is measured under, its id suffixed with
// "@<timing>" when the plan has several (model/timing.hpp). A shape without one (plans written
// before timings were recorded) is read as it was written, and measured the kernel timing.
Shape plan_shape_from_json(const json& j, const std::string& where) {
  require_object(j, where);
  Shape s;
  s.id = field<std::string>(j, "id", where);
  check_plan_shape_id(s.id, where + ": shape id");
  s.label = field_or<std::string>(j, "label", where, "");
  s.params = object_field(j, "params", where);
  s.timing = field_or<std::string>(j, "timing", where, "");
  const auto& names = timing_names();
  if (j.contains("timing") && std::find(names.begin(), names.end(), s.timing) == names.end())
    throw Error(where + ": field 'timing': " + quote(s.timing) + " is not a timing (" +
                join(names, ", ") + ")");
  const auto at = s.id.rfind('@');
  if (at != std::string::npos && s.id.substr(at + 1) != shape_timing(s))
    throw Error(where + ": shape id " + quote(s.id) +
                " names another timing than its field 'timing' (" + quote(s.timing) + ")");
  return s;
}

// Every shape is measured under one of the timings the plan's settings list.
void check_shape_timings(const Plan& p, const std::string& where) {
  std::vector<std::string> timings;
  try {
    timings = parse_timings(p.settings.timing);
  } catch (const UsageError& e) {
    throw Error(where + ".settings: field 'timing': " + e.what());
  }
  for (const Shape& s : p.shapes)
    if (std::find(timings.begin(), timings.end(), shape_timing(s)) == timings.end())
      throw Error(where + ": shape " + quote(s.id) + " is timed '" + shape_timing(s) +
                  "', which the plan's settings do not list (" + p.settings.timing + ")");
}

constexpr const char* kDigestField = "payload_sha256";

void schema_version_or_usage(const json& j, const std::string& where) {
  try {
    schema_version(j, where, kOldestPlanSchemaVersion, kPlanSchemaVersion, "plan", kPlanSchemaFix);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
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

namespace {

// The plan's shapes and tasks: all but a few bytes of a large plan, written element by element.
std::vector<LargeArray> large_arrays(const Plan& p) {
  return {{"shapes", p.shapes.size(), [&p](std::size_t i) { return abh::to_json(p.shapes[i]); }},
          {"tasks", p.tasks.size(), [&p](std::size_t i) { return to_json(p.tasks[i]); }}};
}

// The plan's JSON without its shapes and tasks (empty arrays in their place).
json plan_header_json(const Plan& p) {
  json variants = json::array(), machine = json::array();
  for (const auto& v : p.variants) variants.push_back(to_json(v));
  for (const auto& m : p.machine) machine.push_back(abh::to_json(m));
  json j{{"schema_version", p.schema_version},
         {"harness_version", p.harness_version},
         {"run_id", p.run_id},
         {"run_nonce", p.run_nonce},
         {"created_at", p.created_at},
         {"repo", p.repo},
         {"plugin_target", p.plugin_target},
         {"command", p.command},
         {"worker_sha256", p.worker_sha256},
         {"variants", variants},
         {"shapes", json::array()},
         {"settings", abh::to_json(p.settings)},
         {"schedule", abh::to_json(p.schedule)},
         {"tasks", json::array()},
         {"machine", machine},
         {"placement_notes", p.placement_notes},
         {"launcher", abh::to_json(p.launcher)}};
  if (p.python) j["python"] = to_json(*p.python);
  if (!p.shape_filter.empty()) j["shape_filter"] = p.shape_filter;
  return j;
}

}  // namespace

json to_json(const Plan& p) {
  json j = plan_header_json(p);
  for (const auto& a : large_arrays(p))
    for (std::size_t i = 0; i < a.size; ++i) j[a.key].push_back(a.element(i));
  return j;
}

Plan plan_from_json(const json& j, const std::string& where) {
  Plan p;
  p.schema_version = schema_version(j, where, kOldestPlanSchemaVersion, kPlanSchemaVersion, "plan",
                                    kPlanSchemaFix);
  p.harness_version = field<std::string>(j, "harness_version", where);
  p.run_id = field<std::string>(j, "run_id", where);
  p.run_nonce = field<std::string>(j, "run_nonce", where);
  if (p.run_nonce.size() != 32 ||
      p.run_nonce.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw Error(where + ": field 'run_nonce': " + quote(p.run_nonce) +
                " is not 32 lowercase hex digits");
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
    p.shapes.push_back(plan_shape_from_json(ss[i], where + ".shapes[" + std::to_string(i) + "]"));
  if (j.contains("shape_filter")) p.shape_filter = string_array(j, "shape_filter", where);
  p.settings = measure_settings_from_json(object_field(j, "settings", where), where + ".settings");
  p.schedule = schedule_options_from_json(object_field(j, "schedule", where), where + ".schedule");
  const auto& ts = array_field(j, "tasks", where);
  for (size_t i = 0; i < ts.size(); ++i)
    p.tasks.push_back(task_from_json(ts[i], where + ".tasks[" + std::to_string(i) + "]"));
  if (j.contains("python"))
    p.python = interpreter_from_json(object_field(j, "python", where), where + ".python");
  p.placement_notes = string_array(j, "placement_notes", where);
  const auto& ms = array_field(j, "machine", where);
  for (size_t i = 0; i < ms.size(); ++i)
    p.machine.push_back(
        environment_from_json(ms[i], where + ".machine[" + std::to_string(i) + "]"));
  const PlanIndex index(p);
  if (auto d = index.duplicate()) {
    const Task& t = p.tasks[d->again];
    throw Error(where + ".tasks[" + std::to_string(d->again) + "]: arm " + t.shape + "/" + t.arm +
                " is planned twice (also tasks[" + std::to_string(d->first) + "])");
  }
  if (j.contains("launcher"))
    p.launcher = launcher_spec_from_json(object_field(j, "launcher", where), where + ".launcher");
  if (launcher_places_lanes(p.launcher) &&
      p.machine.size() != static_cast<size_t>(p.launcher.slurm.lanes))
    throw Error(where + ": field 'machine': " + std::to_string(p.machine.size()) + " entries for " +
                std::to_string(p.launcher.slurm.lanes) + " Slurm lanes");
  for (size_t i = 0; i < p.tasks.size(); ++i) check_task_cpus(p, i, where);
  check_shape_timings(p, where);
  for (const auto& t : p.tasks) {
    if (t.gpu < 0 || static_cast<size_t>(t.gpu) >= p.machine.size())
      throw Error(where + ": task " + t.shape + "/" + t.arm + " names machine entry " +
                  std::to_string(t.gpu) + " that the plan does not have");
    p.variant(t.variant);
    if (!index.shape(t.shape)) throw Error("plan " + p.run_id + " has no shape '" + t.shape + "'");
  }
  for (const auto& v : p.variants)
    if (v.is_python() && !p.python)
      throw Error(where + ": variant " + v.name +
                  " is a Python plugin but the plan records no interpreter (field 'python')");
  return p;
}

fs::path plan_path(const fs::path& run_dir) {
  return run_dir / kPlanFile;
}

std::string plan_payload_digest(const json& plan_json) {
  if (!plan_json.is_object()) return sha256_hex(canonical(plan_json));
  // canonical() of the plan without its digest field, fed member by member into the digest: the
  // same bytes, without copying the whole document (34 MB of plan.json for 50,000 shapes).
  // write_plan takes the same digest the same way, with the shapes and tasks made on the fly.
  Sha256 digest;
  large_bodies(plan_json, {}, &digest, kDigestField);
  return digest.hex();
}

namespace {

// An element of a top-level array of plan.json: write_plan indents it by two levels (4 spaces on
// each of its lines) and follows it with ",\n".
std::uintmax_t element_bytes(const json& element) {
  const std::string text = element.dump(2);
  const auto lines = static_cast<std::uintmax_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  return text.size() + 4 * lines + 2;
}

}  // namespace

std::uintmax_t plan_bytes_of(const Task& t) {
  return element_bytes(to_json(t));
}

std::uintmax_t plan_bytes_of(const Shape& s) {
  return element_bytes(to_json(s));
}

std::string write_plan(const fs::path& run_dir, const Plan& p) {
  json j = plan_header_json(p);
  const std::vector<LargeArray> arrays = large_arrays(p);
  Sha256 digest;
  const std::vector<std::string> bodies = large_bodies(j, arrays, &digest, kDigestField);
  j[kDigestField] = digest.hex();  // plan_payload_digest(to_json(p)), without that document
  const std::string text = splice_pretty(j, arrays, bodies) + "\n";
  if (text.size() > kPlanMaxBytes)
    throw Error("the plan of " + std::to_string(p.tasks.size()) + " tasks would be " +
                std::to_string(text.size()) + " bytes of plan.json, more than the " +
                std::to_string(kPlanMaxBytes) +
                " its readers accept; nothing was written: plan fewer shapes or blocks (split the "
                "grid into several runs)");
  RunDirFs(run_dir).write_atomic(kPlanFile, text);
  return sha256_hex(text);
}

namespace {

// Why a directory without plan.json cannot be read as a run, and what to do: wait for a run that
// is starting, restore the plan of one that has results, or remove a start that failed.
std::string no_plan_text(const RunDirFs& dir) {
  const std::string name = printable(dir.root().string());
  const std::string head = name + " is not an abharness run directory (no plan.json)";
  if (FileLock::held_elsewhere(dir, ".lock"))
    return head +
           ": another abharness is starting this run now (building its variants, its "
           "plan not written yet): wait for it to finish";
  if (dir.kind("results") == RunDirFs::Kind::directory)
    return head +
           ", yet it holds results/: its plan was removed after the run, and its results "
           "cannot be checked without it; restore the run's own plan.json (from a copy, "
           "or the artifact the run was uploaded as), or start a new run; do not remove "
           "the directory if its results matter";
  if (dir.kind("variants") == RunDirFs::Kind::directory)
    return head +
           ": its start failed or was stopped before its plan was written, so nothing in "
           "it was measured and there is nothing to resume; remove it (rm -r " +
           quote(dir.root().string()) + ") and start the run again with `abharness run`";
  return head;
}

}  // namespace

Plan load_plan(const fs::path& run_dir) {
  const RunDirFs dir(run_dir);
  const std::string where = printable(plan_path(run_dir).string());
  if (dir.kind(kPlanFile) == RunDirFs::Kind::absent) throw UsageError(no_plan_text(dir));
  std::string bytes = dir.read(kPlanFile, kPlanMaxBytes);
  const std::string file_sha256 = sha256_hex(bytes);
  // A plan that does not parse (a duplicate key, a number out of range) or does not map is a
  // damaged run directory, like an edited one: a provenance failure, not a usage error.
  const auto damaged = [&](const auto& step) {
    try {
      return step();
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw ProvenanceError(std::string(e.what()) +
                            " (plan.json is written once by abharness and never edited: start a "
                            "new run)");
    }
  };
  const json j = damaged([&] {
    json parsed = parse_json(bytes, where);
    require_object(parsed, where);
    return parsed;
  });
  std::string().swap(bytes);  // 34 MB at 50,000 shapes, beside the document and then the plan
  // The version first: an older plan has no digest, and is refused for its version, not that.
  schema_version_or_usage(j, where);
  const auto recorded = j.find(kDigestField);
  const std::string actual = plan_payload_digest(j);
  if (recorded == j.end() || !recorded->is_string() || recorded->get<std::string>() != actual)
    throw ProvenanceError(where + ": plan-digest (field '" + kDigestField + "'): expected " +
                          actual + " (the digest of the plan's content), found " +
                          (recorded == j.end() ? std::string("(absent)") : recorded->dump()) +
                          ": the plan was edited after it was written; results measured under "
                          "another plan must not be mixed with it: start a new run");
  Plan p = damaged([&] { return plan_from_json(j, where); });
  p.file_sha256 = file_sha256;
  return p;
}

std::string new_run_nonce() {
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}

std::string plugin_digest(const fs::path& run_dir, const Variant& v) {
  const fs::path plugin = run_dir / v.plugin;
  return v.is_python() ? sha256_tree(plugin) : sha256_file(plugin);
}

Shape arm_shape(const Shape& s, const Variant& v) {
  Shape out = s;
  for (auto it = v.run.begin(); it != v.run.end(); ++it)
    if (it.key() != kTacticRunSetting) out.params[it.key()] = *it;
  return out;
}

MeasureSettings arm_settings(const MeasureSettings& plan, const Shape& s, const Variant& v) {
  MeasureSettings out = arm_settings(plan, s);
  out.tactic = variant_tactic(v, out.tactic);
  return out;
}

std::string variant_tactic(const Variant& v, const std::string& plan_tactic) {
  const auto it = v.run.find(kTacticRunSetting);
  if (it == v.run.end()) return plan_tactic;
  if (!it->is_string())
    throw Error("variant " + v.name + ": run setting 'tactic' is " + it->dump() +
                ", not a string (auto, default or a tactic key)");
  return it->get<std::string>();
}

fs::path result_path(const fs::path& run_dir, const Task& t) {
  return run_dir / result_rel(t);
}

fs::path log_path(const fs::path& run_dir, const Task& t, const std::string& ext) {
  return run_dir / log_rel(t, ext);
}

fs::path result_rel(const Task& t) {
  return fs::path("results") / t.shape / (t.arm + ".json");
}

fs::path log_rel(const Task& t, const std::string& ext) {
  return fs::path("logs") / t.shape / (t.arm + "." + ext);
}

}  // namespace abh
