// The plan: written once to runs/<id>/plan.json before any arm runs, never edited. It fixes what
// "baseline" and "candidate" mean (resolved commit ids and source identities, not branch names),
// which binaries measure them, the settings, the machine and the order of arms. Every result is
// checked against it, and bound to it: a result carries the plan's run nonce and the SHA-256 of
// the plan.json its worker read, so a result of any other run, or of this run before its plan was
// edited, is refused by name. The plan carries a digest of its own content too (payload_sha256),
// so an edit is caught before anything is measured under it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/environment.hpp"
#include "model/grid.hpp"
#include "model/identity.hpp"
#include "model/interpreter.hpp"
#include "model/launch.hpp"
#include "model/manifest.hpp"
#include "model/schedule.hpp"
#include "model/settings.hpp"

namespace abh {

struct Variant {
  // "baseline" | "candidate" (--baseline/--candidate), or a name of the variants file
  // (model/variants_file.hpp). The plan's first variant is the baseline.
  std::string name;
  SourceIdentity source;
  BuildRecipe recipe;
  // Path of the built plugin, relative to the run directory; for a Python plugin, the directory
  // its module is imported from (the materialized sources, variants/<name>/src).
  std::string plugin;
  std::string plugin_sha256;    // of the plugin file; of that directory's tree (sha256_tree)
  std::string build_cache_key;  // empty when nothing was built (a Python plugin without argv)
  std::string toolchain_id;
  std::string device;  // "cpu" or "cuda", as the built plugin declares itself
  std::map<std::string, std::string> libraries;  // the plugin's library versions
  // The variants file's settings (docs/variants.md): build settings, already substituted into
  // `recipe` (and so in the build cache key), and run settings, merged into every shape's params
  // for this variant's arms (arm_shape). Both empty, and absent from the JSON, without a file.
  std::map<std::string, std::string> build;
  json run = json::object();
  bool is_python() const { return recipe.python.has_value(); }
  bool operator==(const Variant&) const = default;
};

struct Plan {
  int schema_version = 0;
  std::string harness_version;
  std::string run_id;
  // 128 random bits drawn when the plan is made: two runs never share it, even with one run id.
  std::string run_nonce;
  std::string created_at;  // UTC, ISO 8601
  std::string repo;        // absolute path of the kernel repository
  std::string plugin_target;
  std::vector<std::string> command;  // the argv that created the run
  std::string worker_sha256;
  std::vector<Variant> variants;
  std::vector<Shape> shapes;
  // The patterns of `run --shapes` that chose `shapes` from the grid (shape_filter.hpp); empty
  // when the whole grid was planned. Absent from the JSON when empty.
  std::vector<std::string> shape_filter;
  MeasureSettings settings;
  ScheduleOptions schedule;
  std::vector<Task> tasks;
  // One per lane (index = Task::gpu): a GPU of this machine, or the host for CPU plugins; with a
  // launcher that places lanes (Slurm), the machine expected on each lane's node (launch.hpp).
  std::vector<Environment> machine;
  std::optional<Interpreter> python;  // the interpreter of the Python variants, when there are any
  LauncherSpec launcher;              // absent in plans written before launchers: local
  // Not in the JSON: the SHA-256 of the plan.json bytes this plan was read from (load_plan), the
  // digest every result must name; empty for a plan that was not read from a file.
  std::string file_sha256;
  // Where the placement of arms fell back from its rule (Task::cpus), one line each; empty when
  // it did not, and always with a launcher that places lanes (each lane chooses on its node).
  std::vector<std::string> placement_notes;

  const Variant& variant(const std::string& name) const;
  // The variant every other one is compared with: the first.
  const Variant& baseline() const { return variants.at(0); }
  const Shape& shape(const std::string& id) const;
  const Task* find_task(const std::string& shape, const std::string& arm) const;
};

// The plan's file in a run directory.
inline constexpr const char* kPlanFile = "plan.json";
// What the reader of a plan of another schema version is told to do, after "found N, this
// abharness reads plan schema M" (the Python front end, which reads the plan before the engine
// does, says the same).
inline constexpr const char* kPlanSchemaFix =
    "the run directory was written by another version of abharness (results of plan schema 1 "
    "carry no run nonce and no plan digest, so this version cannot tell them from results of "
    "another run); verify or resume it with the abharness that wrote it, or start a new run";

// The plan's content (without its own digest).
json to_json(const Plan& p);
Plan plan_from_json(const json& j, const std::string& where);
// The plan's digest of its own content: the SHA-256 of the canonical JSON without the digest.
std::string plan_payload_digest(const json& plan_json);
// The most bytes of plan.json that load_plan reads, and so the most write_plan writes: a plan is
// read whole by every worker and command, and bounded like every document abharness reads.
inline constexpr std::uintmax_t kPlanMaxBytes = JsonLimits{}.max_bytes;

// The bytes one task, or one shape, takes in plan.json as write_plan lays it out (an element of
// "tasks" or "shapes", with its separator): the planner multiplies them out to refuse, before
// anything is built, a plan larger than kPlanMaxBytes.
std::uintmax_t plan_bytes_of(const Task& t);
std::uintmax_t plan_bytes_of(const Shape& s);

// Writes <run>/plan.json atomically, with payload_sha256, without following links, and returns
// the SHA-256 of the bytes written (what load_plan sets as file_sha256). Throws, writing nothing,
// when the plan would be larger than kPlanMaxBytes: its own reader would refuse it.
std::string write_plan(const std::filesystem::path& run_dir, const Plan& p);
// Reads <run>/plan.json without following links; `file_sha256` is set to the digest of the
// bytes read. A plan whose payload_sha256 does not match its content was edited: that is a
// ProvenanceError naming the field. A plan of another schema version is a UsageError.
Plan load_plan(const std::filesystem::path& run_dir);
std::filesystem::path plan_path(const std::filesystem::path& run_dir);
// A fresh run nonce: 32 hex digits from the system's random source.
std::string new_run_nonce();

// The digest of a variant's plugin as it is now: the file's SHA-256, or for a Python plugin the
// SHA-256 of its source tree. Equal to plugin_sha256 while nothing changed it.
std::string plugin_digest(const std::filesystem::path& run_dir, const Variant& v);

// The run setting that is the harness's, not the plugin's: a variant's tactic mode or key
// (MeasureSettings::tactic), so that one build can be measured tuned and untuned in one run.
inline constexpr const char* kTacticRunSetting = "tactic";

// The shape as `v`'s arms measure it: its params with v's run settings merged in (a run setting
// replaces a parameter of the same name), the tactic setting left out. The shape itself when v
// has none.
Shape arm_shape(const Shape& s, const Variant& v);
// The tactic `v`'s arms measure: its run setting, or else the plan's `--tactic`.
std::string variant_tactic(const Variant& v, const std::string& plan_tactic);
// The settings an arm of `v` measures shape `s` with (what its result's invocation records): the
// plan's, with the shape's one timing (arm_settings) and the variant's tactic.
MeasureSettings arm_settings(const MeasureSettings& plan, const Shape& s, const Variant& v);

// Where one arm's files live inside a run directory.
std::filesystem::path result_path(const std::filesystem::path& run_dir, const Task& t);
std::filesystem::path log_path(const std::filesystem::path& run_dir, const Task& t,
                               const std::string& ext);  // "out", "err", "failure.json"
// The same, relative to the run directory ("results/<shape>/<arm>.json"), for RunDirFs.
std::filesystem::path result_rel(const Task& t);
std::filesystem::path log_rel(const Task& t, const std::string& ext);

}  // namespace abh
