// The plan: written once to runs/<id>/plan.json before any arm runs, never edited. It fixes what
// "baseline" and "candidate" mean (resolved commit ids and source identities, not branch names),
// which binaries measure them, the settings, the machine and the order of arms. Every result is
// checked against it.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/environment.hpp"
#include "model/grid.hpp"
#include "model/identity.hpp"
#include "model/manifest.hpp"
#include "model/schedule.hpp"
#include "model/settings.hpp"

namespace abh {

struct Variant {
  std::string name;  // "baseline" | "candidate"
  SourceIdentity source;
  BuildRecipe recipe;
  std::string plugin;  // path of the built plugin, relative to the run directory
  std::string plugin_sha256;
  std::string build_cache_key;
  std::string toolchain_id;
  std::string device;  // "cpu" or "cuda", as the built plugin declares itself
  std::map<std::string, std::string> libraries;  // the plugin's library versions
  bool operator==(const Variant&) const = default;
};

struct Plan {
  int schema_version = 0;
  std::string harness_version;
  std::string run_id;
  std::string created_at;  // UTC, ISO 8601
  std::string repo;        // absolute path of the kernel repository
  std::string plugin_target;
  std::vector<std::string> command;  // the argv that created the run
  std::string worker_sha256;
  std::vector<Variant> variants;
  std::vector<Shape> shapes;
  MeasureSettings settings;
  ScheduleOptions schedule;
  std::vector<Task> tasks;
  std::vector<Environment> machine;  // one per GPU used (index = Task::gpu), or the host for CPU
  // Where the placement of arms fell back from its rule (Task::cpus), one line each; empty when
  // it did not.
  std::vector<std::string> placement_notes;

  const Variant& variant(const std::string& name) const;
  const Shape& shape(const std::string& id) const;
  const Task* find_task(const std::string& shape, const std::string& arm) const;
};

json to_json(const Plan& p);
Plan plan_from_json(const json& j, const std::string& where);
Plan load_plan(const std::filesystem::path& run_dir);
std::filesystem::path plan_path(const std::filesystem::path& run_dir);

// Where one arm's files live inside a run directory.
std::filesystem::path result_path(const std::filesystem::path& run_dir, const Task& t);
std::filesystem::path log_path(const std::filesystem::path& run_dir, const Task& t,
                               const std::string& ext);  // "out", "err", "failure.json"

}  // namespace abh
