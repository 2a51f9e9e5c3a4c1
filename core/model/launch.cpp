#include "model/launch.hpp"

#include <algorithm>
#include <cctype>

#include "system/cpu_set.hpp"
#include "system/error.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// Slurm job ids name files here, so only the plain numeric form is accepted.
std::string job_id_field(const json& j, const std::string& where) {
  std::string id = field<std::string>(j, "job_id", where);
  if (id.empty() || id.size() > 20 ||
      !std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw Error(where + ": field 'job_id': '" + id + "' is not a Slurm job id (digits)");
  return id;
}

// The CPUs the lane chose on its node: empty only in a record of a refused node (it ran nothing).
std::vector<int> cpus_field(const json& j, const std::string& where) {
  std::vector<int> cpus;
  for (const auto& c : array_field(j, "cpus", where)) {
    if (!c.is_number_integer() || c.get<long long>() < 0 || c.get<long long>() > 1 << 20)
      throw Error(where + ": field 'cpus': every entry must be a CPU number (an integer >= 0)");
    cpus.push_back(c.get<int>());
  }
  return cpus;
}

int lane_field(const json& j, const std::string& where) {
  int lane = field<int>(j, "lane", where);
  if (lane < 0) throw Error(where + ": field 'lane': " + std::to_string(lane) + " is negative");
  return lane;
}

// The records in `dir` (run-relative), read without following links: a link or anything but a
// regular file there is refused by name, since a record read from outside the run directory
// would place results it never saw.
template <typename Record, typename Parse>
std::vector<Record> load_records(const RunDirFs& run, const fs::path& dir, Parse parse) {
  std::vector<Record> out;
  for (const auto& e : run.list(dir)) {
    // Hidden files are interrupted atomic writes: never trusted.
    if (e.name.empty() || e.name[0] == '.' || fs::path(e.name).extension() != ".json") continue;
    const fs::path rel = dir / e.name;
    if (e.kind != RunDirFs::Kind::file)
      throw UsageError(run.path(rel).string() +
                       " is not a regular file (a link or a directory): remove it");
    out.push_back(parse(run.read_json(rel, JsonLimits{1u << 20, 16}), run.path(rel).string()));
  }
  return out;
}

}  // namespace

json to_json(const LauncherSpec& l) {
  json j{{"name", l.name}};
  if (l.name == "slurm")
    j["slurm"] = json{{"lanes", l.slurm.lanes},     {"partition", l.slurm.partition},
                      {"account", l.slurm.account}, {"time", l.slurm.time},
                      {"gres", l.slurm.gres},       {"sbatch_args", l.slurm.sbatch_args}};
  return j;
}

LauncherSpec launcher_spec_from_json(const json& j, const std::string& where) {
  LauncherSpec l;
  l.name = field<std::string>(j, "name", where);
  if (l.name == "local") return l;
  if (l.name != "slurm")
    throw Error(where + ": field 'name': launcher '" + l.name + "' is neither local nor slurm");
  const std::string w = where + ".slurm";
  const json& s = object_field(j, "slurm", where);
  l.slurm.lanes = field<int>(s, "lanes", w);
  if (l.slurm.lanes < 1) throw Error(w + ": field 'lanes': must be at least 1");
  l.slurm.partition = field<std::string>(s, "partition", w);
  l.slurm.account = field<std::string>(s, "account", w);
  l.slurm.time = field<std::string>(s, "time", w);
  l.slurm.gres = field<std::string>(s, "gres", w);
  l.slurm.sbatch_args = string_array(s, "sbatch_args", w);
  return l;
}

bool launcher_places_lanes(const LauncherSpec& l) {
  return l.name != "local";
}

bool lanes_take_turns_to_open(const LauncherSpec& l, int lanes) {
  return !launcher_places_lanes(l) && lanes > 1;
}

std::string arm_place(const Environment& e, const std::vector<int>& cpus) {
  return e.hostname + (e.gpu ? " GPU " + e.gpu->uuid : "") + " CPUs " + format_cpu_list(cpus);
}

Environment without_placement(Environment e) {
  e.hostname.clear();
  if (e.gpu) {
    e.gpu->uuid.clear();
    e.gpu->pci_bus_id.clear();
    e.gpu->index = 0;
  }
  return e;
}

Environment with_placement(Environment planned, const Environment& node) {
  planned.hostname = node.hostname;
  if (planned.gpu && node.gpu) {
    planned.gpu->uuid = node.gpu->uuid;
    planned.gpu->pci_bus_id = node.gpu->pci_bus_id;
    planned.gpu->index = node.gpu->index;
  }
  return planned;
}

namespace {

// What a mismatch is called where people read it: "GPU model", not "gpu.name".
std::string field_label(const std::string& path) {
  static const std::pair<const char*, const char*> labels[] = {
      {"gpu.name", "GPU model"},
      {"driver_version", "driver"},
      {"cuda_runtime_version", "CUDA runtime"},
      {"cupti_version", "CUPTI"},
      {"cpu_model", "CPU model"},
      {"os", "operating system"}};
  for (const auto& [key, label] : labels)
    if (path == key) return std::string(label) + " (" + path + ")";
  return path;
}

}  // namespace

std::string machine_mismatch(const Environment& planned, const Environment& node) {
  json want = to_json(without_placement(planned)), have = to_json(without_placement(node));
  // The plugin's library versions are the plugin's, recorded per variant, not the machine's.
  want.erase("libraries");
  have.erase("libraries");
  for (auto it = want.begin(); it != want.end(); ++it) {
    const json& h = have[it.key()];
    if (it->is_object() && h.is_object()) {
      for (auto g = it->begin(); g != it->end(); ++g)
        if (h.value(g.key(), json()) != *g)
          return field_label(it.key() + "." + g.key()) + ": plan " + g->dump() + ", node " +
                 h.value(g.key(), json()).dump();
    } else if (h != *it) {
      return field_label(it.key()) + ": plan " + it->dump() + ", node " + h.dump();
    }
  }
  return "";
}

json to_json(const SubmissionRecord& r) {
  return json{{"lane", r.lane},         {"job_id", r.job_id},
              {"job_name", r.job_name}, {"submitted_at", r.submitted_at},
              {"arms", r.arms},         {"sbatch", r.sbatch}};
}

SubmissionRecord submission_from_json(const json& j, const std::string& where) {
  SubmissionRecord r;
  r.lane = lane_field(j, where);
  r.job_id = job_id_field(j, where);
  r.job_name = field<std::string>(j, "job_name", where);
  r.submitted_at = field<std::string>(j, "submitted_at", where);
  r.arms = string_array(j, "arms", where);
  r.sbatch = string_array(j, "sbatch", where);
  return r;
}

json to_json(const NodeRecord& r) {
  return json{{"lane", r.lane},
              {"job_id", r.job_id},
              {"restart", r.restart},
              {"started_at", r.started_at},
              {"environment", to_json(r.environment)},
              {"refused", r.refused},
              {"set_aside", r.set_aside},
              {"cpus", r.cpus},
              {"placement_note", r.placement_note}};
}

NodeRecord node_record_from_json(const json& j, const std::string& where) {
  NodeRecord r;
  r.lane = lane_field(j, where);
  r.job_id = job_id_field(j, where);
  r.restart = field<int>(j, "restart", where);
  r.started_at = field<std::string>(j, "started_at", where);
  r.environment =
      environment_from_json(object_field(j, "environment", where), where + ".environment");
  r.refused = field<std::string>(j, "refused", where);
  r.set_aside = string_array(j, "set_aside", where);
  r.cpus = cpus_field(j, where);
  r.placement_note = field<std::string>(j, "placement_note", where);
  return r;
}

fs::path submission_rel(int lane, const std::string& job_id) {
  return fs::path("launcher") / "jobs" /
         ("lane" + std::to_string(lane) + "-job" + job_id + ".json");
}

fs::path node_record_rel(int lane, const std::string& job_id, int restart) {
  return fs::path("launcher") / "nodes" /
         ("lane" + std::to_string(lane) + "-job" + job_id + "-r" + std::to_string(restart) +
          ".json");
}

fs::path submission_path(const fs::path& run_dir, int lane, const std::string& job_id) {
  return run_dir / submission_rel(lane, job_id);
}

fs::path node_record_path(const fs::path& run_dir, int lane, const std::string& job_id,
                          int restart) {
  return run_dir / node_record_rel(lane, job_id, restart);
}

void write_record(const RunDirFs& run, const SubmissionRecord& r) {
  run.write_json_atomic(submission_rel(r.lane, r.job_id), to_json(r));
}

void write_record(const RunDirFs& run, const NodeRecord& r) {
  run.write_json_atomic(node_record_rel(r.lane, r.job_id, r.restart), to_json(r));
}

std::vector<SubmissionRecord> load_submissions(const RunDirFs& run) {
  return load_records<SubmissionRecord>(run, fs::path("launcher") / "jobs", submission_from_json);
}

std::vector<NodeRecord> load_node_records(const RunDirFs& run) {
  return load_records<NodeRecord>(run, fs::path("launcher") / "nodes", node_record_from_json);
}

std::vector<SubmissionRecord> load_submissions(const fs::path& run_dir) {
  return load_submissions(RunDirFs(run_dir));
}

std::vector<NodeRecord> load_node_records(const fs::path& run_dir) {
  return load_node_records(RunDirFs(run_dir));
}

}  // namespace abh
