#include "provenance/provenance.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "model/plan_index.hpp"
#include "model/timing.hpp"
#include "provenance/results_scan.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"
#include "system/version.hpp"

namespace abh {
namespace fs = std::filesystem;

std::string ProvenanceProblem::describe() const {
  std::string s = file + ": " + rule;
  if (!field.empty()) s += " (field '" + field + "')";
  if (!expected.empty() || !found.empty()) s += ": expected " + expected + ", found " + found;
  return s;
}

bool Validation::complete() const {
  return problems.empty() && std::all_of(outcomes.begin(), outcomes.end(),
                                         [](const auto& o) { return o.result.has_value(); });
}

namespace {

// A value as a problem line quotes it: control characters escaped (a NUL would cut the line),
// and cut short so that a hostile file cannot make the message as large as itself.
std::string short_json(const json& j) {
  std::string s = j.is_string() ? printable(j.get<std::string>()) : j.dump();
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

// Compares two JSON values field by field and reports the first differing leaf by its path, so
// that a changed GPU UUID reads as "environment.gpu.uuid", not "environment".
void diff_json(const json& expected, const json& found, const std::string& path,
               const std::string& rule, const std::string& file,
               std::vector<ProvenanceProblem>& out) {
  if (expected.is_object() && found.is_object()) {
    std::set<std::string> keys;
    for (auto it = expected.begin(); it != expected.end(); ++it) keys.insert(it.key());
    for (auto it = found.begin(); it != found.end(); ++it) keys.insert(it.key());
    for (const auto& k : keys) {
      std::string p = path + "." + k;
      if (!expected.contains(k))
        out.push_back({rule, file, p, "(absent)", short_json(found[k])});
      else if (!found.contains(k))
        out.push_back({rule, file, p, short_json(expected[k]), "(absent)"});
      else
        diff_json(expected[k], found[k], p, rule, file, out);
    }
    return;
  }
  if (expected != found) out.push_back({rule, file, path, short_json(expected), short_json(found)});
}

// The worker ran where it was placed (`cpus`: the plan's, or its lane's on the node): it pinned
// itself to those CPUs, its measuring thread to the first of them, and it was seen on no other.
void check_placement(const std::vector<int>& cpus, const std::string& whose,
                     const std::string& file, const Placement& p,
                     std::vector<ProvenanceProblem>& out) {
  if (p.cpus != cpus)
    out.push_back({"placement", file, "placement.cpus", format_cpu_list(cpus) + " (" + whose + ")",
                   format_cpu_list(p.cpus)});
  const std::vector<int> host = {cpus.empty() ? -1 : cpus.front()};
  if (p.affinity != host)
    out.push_back({"placement", file, "placement.affinity", format_cpu_list(host),
                   format_cpu_list(p.affinity)});
  bool elsewhere = p.seen.empty();
  for (int c : p.seen) elsewhere = elsewhere || c != host.front();
  if (elsewhere)
    out.push_back({"placement", file, "placement.seen", "CPU " + format_cpu_list(host) + " only",
                   p.seen.empty() ? "(none recorded)" : format_cpu_list(p.seen)});
}

// Where a result of a task must have been measured: the machine, and the CPUs with whose they are
// (for the problem line).
struct ExpectedPlace {
  Environment machine;
  std::vector<int> cpus;
  std::string whose;
};

bool same_node(const NodeRecord& node, const Environment& got) {
  const Environment& e = node.environment;
  return e.hostname == got.hostname && (!e.gpu || (got.gpu && e.gpu->uuid == got.gpu->uuid));
}

// The place of a result of `task`: the plan's machine and CPUs, or with a launcher that places
// lanes, the plan's machine on the node and GPU that a job of the lane recorded, with the CPUs
// that job chose there (a problem when no job of the lane recorded that node and GPU).
ExpectedPlace expected_place(const Plan& plan, const Task& task, const ArmResult& r,
                             const std::string& file, const std::vector<NodeRecord>& lane_nodes,
                             std::vector<ProvenanceProblem>& problems) {
  const Environment& planned = plan.machine.at(static_cast<size_t>(task.gpu));
  if (!launcher_places_lanes(plan.launcher)) return {planned, task.cpus, "the plan's"};
  const Environment& got = r.environment;
  const NodeRecord* match = nullptr;
  // A lane restarted on the same node may have chosen other CPUs: the job whose CPUs the worker
  // used is the one it ran under.
  for (const auto& node : lane_nodes)
    if (same_node(node, got) && (!match || node.cpus == r.placement.cpus)) match = &node;
  if (match)
    return {with_placement(planned, match->environment), match->cpus,
            "chosen on the node by lane job " + match->job_id};
  std::string where = got.hostname + (got.gpu ? " GPU " + got.gpu->uuid : "");
  problems.push_back({"lane-node", file, "environment.hostname",
                      "a node and GPU that a job of lane " + std::to_string(task.gpu) +
                          " recorded under launcher/nodes/",
                      where});
  // The rest is still compared with the plan; the CPUs with themselves (no record to hold them
  // to, and the problem above is already said).
  return {with_placement(planned, got), r.placement.cpus, "the result's own"};
}

}  // namespace

std::optional<ArmResult> validate_result(const Plan& plan, const Task& task,
                                         const std::string& file, const json& raw,
                                         std::vector<ProvenanceProblem>& problems,
                                         const std::vector<NodeRecord>& lane_nodes) {
  return validate_result(PlanIndex(plan), task, file, raw, problems, lane_nodes);
}

std::optional<ArmResult> validate_result(const PlanIndex& index, const Task& task,
                                         const std::string& file, const json& raw,
                                         std::vector<ProvenanceProblem>& problems,
                                         const std::vector<NodeRecord>& lane_nodes) {
  const Plan& plan = index.plan();
  const size_t before = problems.size();
  if (!raw.is_object()) {
    problems.push_back({"result-format", file, "", "a JSON object", short_json(raw)});
    return std::nullopt;
  }
  // Schema and digest first: a file whose payload does not match its own digest was edited, and
  // nothing else in it can be trusted.
  if (raw.value("schema_version", json()) != json(kResultSchemaVersion)) {
    problems.push_back({"schema-version", file, "schema_version",
                        std::to_string(kResultSchemaVersion),
                        short_json(raw.value("schema_version", json()))});
    return std::nullopt;
  }
  // Read without value<string>(): a digest of another JSON type must be a refusal (exit 3) naming
  // the field, not a type_error that ends the whole command as an internal error.
  auto rec = raw.find("payload_sha256");
  const bool rec_ok = rec != raw.end() && rec->is_string();
  std::string actual = payload_digest(raw);
  if (!rec_ok || rec->get<std::string>() != actual) {
    problems.push_back({"payload-digest", file, "payload_sha256", actual,
                        rec == raw.end() ? "(absent)" : short_json(*rec)});
    return std::nullopt;
  }
  ArmResult r;
  try {
    r = result_from_json(raw, file);
  } catch (const std::exception& e) {
    problems.push_back({"result-format", file, "", "a well-formed result", e.what()});
    return std::nullopt;
  }
  // Bound to this plan: the exact plan.json its worker read. A result of another run (even of the
  // same command with the same run id) or of this run before its plan was edited fails here.
  if (r.plan_sha256 != plan.file_sha256)
    problems.push_back({"plan-digest", file, "plan_sha256", plan.file_sha256, r.plan_sha256});
  if (r.harness_version != plan.harness_version)
    problems.push_back(
        {"harness-version", file, "harness_version", plan.harness_version, r.harness_version});
  const Shape* planned_shape = index.shape(task.shape);
  if (!planned_shape) throw Error("plan " + plan.run_id + " has no shape '" + task.shape + "'");
  const Shape& shape = *planned_shape;
  // The arm's settings: the plan's, with its shape's one timing and its variant's tactic; the
  // variant's other run settings are in the params its arms measured (model/plan.hpp).
  const Variant& v = plan.variant(task.variant);
  Invocation want{plan.run_id,
                  plan.run_nonce,
                  shape.id,
                  arm_shape(shape, v).params,
                  task.arm,
                  task.variant,
                  task.round,
                  plan.plugin_target,
                  arm_settings(plan.settings, shape, v)};
  diff_json(to_json(want), to_json(r.invocation), "invocation", "invocation", file, problems);
  diff_json(to_json(v.source), to_json(r.source), "source", "source-identity", file, problems);
  if (r.plugin_sha256 != v.plugin_sha256)
    problems.push_back({"plugin-sha256", file, "plugin_sha256", v.plugin_sha256, r.plugin_sha256});
  if (r.worker_sha256 != plan.worker_sha256)
    problems.push_back(
        {"worker-sha256", file, "worker_sha256", plan.worker_sha256, r.worker_sha256});
  // A Python arm ran under the plan's interpreter, with the plan's distributions; any other arm
  // under none.
  const json want_python = v.is_python() && plan.python ? identity_json(*plan.python) : json();
  const json got_python = r.python ? identity_json(*r.python) : json();
  diff_json(want_python, got_python, "python", "python-interpreter", file, problems);
  const ExpectedPlace place = expected_place(plan, task, r, file, lane_nodes, problems);
  Environment want_env = place.machine;
  want_env.libraries = v.libraries;
  diff_json(to_json(want_env), to_json(r.environment), "environment", "environment", file,
            problems);
  check_placement(place.cpus, place.whose, file, r.placement, problems);
  if (r.measurement.samples_ns.empty())
    problems.push_back({"samples", file, "measurement.samples_ns", "at least one sample", "none"});
  // Clock normalization pairs sample i with clock i: a list of another length would misalign all.
  const auto& mhz = r.measurement.clock.sample_mhz;
  if (!mhz.empty() && mhz.size() != r.measurement.samples_ns.size())
    problems.push_back({"samples", file, "measurement.clock.sample_mhz",
                        std::to_string(r.measurement.samples_ns.size()) + " clock readings",
                        std::to_string(mhz.size())});
  // The stopping rule's evidence is of these samples: a count that differs is an edit of one or
  // the other (with a recomputed digest, which the digest rule cannot see), or of nothing real.
  const std::optional<StopEvidence>& stop = r.measurement.stop;
  if (stop && static_cast<std::size_t>(stop->samples) != r.measurement.samples_ns.size())
    problems.push_back({"samples", file, "measurement.stop.samples",
                        std::to_string(r.measurement.samples_ns.size()) + " (the samples kept)",
                        std::to_string(stop->samples)});
  if (!r.correctness.passed)
    problems.push_back({"correctness", file, "correctness.passed", "true", "false"});
  if (problems.size() != before) return std::nullopt;
  return r;
}

namespace {

// What an earlier validation by this process passed: its stamps, and its outcomes with a result
// by their result's path (one lookup per task, not a scan of every outcome).
struct Earlier {
  const std::map<std::string, FileStamp>* stamps = nullptr;
  std::unordered_map<std::string, const ArmOutcome*> passed;
};

Earlier earlier_results(const Validation* earlier) {
  Earlier e;
  if (!earlier) return e;
  e.stamps = &earlier->stamps;
  e.passed.reserve(earlier->outcomes.size());
  for (const auto& o : earlier->outcomes)
    if (o.result) e.passed.emplace(result_rel(o.task).generic_string(), &o);
  return e;
}

// The result at `rel` for task `t` when it passes validation; problems go to `v`. A file this
// process already validated (in `earlier`), untouched since (same size and mtime), is not read
// and checked again: resume validates each existing result once.
std::optional<ArmResult> checked_result(const RunDirFs& run, const PlanIndex& plan, const Task& t,
                                        const std::string& rel, const Earlier& earlier,
                                        const std::vector<NodeRecord>& lane_nodes, Validation& v,
                                        FileStamp& stamp) {
  std::string bytes;
  RunDirFs::FileInfo info;
  try {
    bytes = run.read(rel, 64u << 20, &info);
  } catch (const std::exception& e) {
    v.problems.push_back({"result-format", rel, "", "valid JSON", e.what()});
    return std::nullopt;
  }
  stamp = FileStamp{info.size, info.mtime_ns};
  if (earlier.stamps) {
    auto it = earlier.stamps->find(rel);
    auto passed = earlier.passed.find(rel);
    if (it != earlier.stamps->end() && it->second == stamp && passed != earlier.passed.end() &&
        passed->second->task == t)
      return *passed->second->result;
  }
  json raw;
  try {
    raw = parse_json(bytes, rel, JsonLimits{64u << 20, 32});
  } catch (const std::exception& e) {
    v.problems.push_back({"result-format", rel, "", "valid JSON", e.what()});
    return std::nullopt;
  }
  return validate_result(plan, t, rel, raw, v.problems, lane_nodes);
}

// The records of each lane's jobs that started (refusals ran nothing and place nothing), read
// without following links. A record that cannot be read is a problem: the results of its lane
// cannot be placed.
std::map<int, std::vector<NodeRecord>> lane_nodes_of(const RunDirFs& run, const Plan& plan,
                                                     Validation& v) {
  std::map<int, std::vector<NodeRecord>> nodes;
  if (!launcher_places_lanes(plan.launcher)) return nodes;
  try {
    for (auto& r : load_node_records(run))
      if (r.refused.empty()) nodes[r.lane].push_back(std::move(r));
  } catch (const std::exception& e) {
    v.problems.push_back({"lane-record", "launcher/nodes", "", "readable node records", e.what()});
  }
  return nodes;
}

// Every arm of a shape that has a result agrees with the shape's first on `what` (a description
// of the arm); each one that does not is a `rule` problem about `field`.
template <typename Describe>
void check_shape_agrees(const Validation& v, const std::string& rule, const std::string& field,
                        const std::string& whose, Describe what,
                        std::vector<ProvenanceProblem>& problems) {
  std::map<std::string, std::pair<std::string, std::string>> first;  // shape -> (file, what)
  for (const auto& o : v.outcomes) {
    if (!o.result) continue;
    const std::string found = what(*o.result);
    std::string rel = result_rel(o.task).generic_string();
    auto [it, fresh] = first.emplace(o.task.shape, std::pair{rel, found});
    if (!fresh && it->second.second != found)
      problems.push_back(
          {rule, rel, field, whose + it->second.first + " (" + it->second.second + ")", found});
  }
}

// All arms of a shape are compared with each other, so they must have run on one node, one GPU
// and the same CPUs (with a launcher that places lanes, a lane restarted elsewhere must not split
// a shape), and must have prepared their caches the same way before each sample (a bench may
// choose the L2 flush through the environment, and a resume may run with another).
void check_shape_consistency(const Validation& v, std::vector<ProvenanceProblem>& problems) {
  check_shape_agrees(
      v, "shape-split", "environment", "the node, GPU and CPUs of ",
      [](const ArmResult& r) { return arm_place(r.environment, r.placement.cpus); }, problems);
  check_shape_agrees(
      v, "shape-cache", "measurement.cache_preparation", "the cache preparation of ",
      [](const ArmResult& r) { return r.measurement.cache_preparation; }, problems);
}

// Why an arm has no result: its failure record under logs/ (a crashed, hung or wrong arm), or
// "not run".
std::string failure_reason(const RunDirFs& run, const Task& t) {
  const fs::path failure = log_rel(t, "failure.json");
  try {
    if (run.kind(failure) == RunDirFs::Kind::absent) return "not run";
    json f = run.read_json(failure, JsonLimits{1u << 20, 8});
    return printable(f.value("reason", std::string("failed (no reason recorded)")));
  } catch (const std::exception& e) {
    return std::string("failed (failure record unreadable: ") + e.what() + ")";
  }
}

// The names under logs/ (shape directories, and whatever else is there), so that an arm of a shape
// with none is "not run" without walking to its failure record: one listing instead of a walk of
// the path per arm, which was 14 % of `verify` at 50,000 shapes (perf). Nothing when logs/ is not a
// plain directory: then every arm is looked up as before, and refused or named as before.
std::optional<std::unordered_set<std::string>> logged_shapes(const RunDirFs& run) {
  try {
    const RunDirFs::Kind logs = run.kind("logs");
    if (logs == RunDirFs::Kind::absent) return std::unordered_set<std::string>{};
    if (logs != RunDirFs::Kind::directory) return std::nullopt;
    std::unordered_set<std::string> names;
    for (auto& e : run.list("logs")) names.insert(std::move(e.name));
    return names;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Every built plugin the plan records is still the file it hashed: a plugin replaced after the
// run (a byte appended) is a problem, even though the results name the plugin they loaded.
void check_plugins(const fs::path& run_dir, const RunDirFs& run, const Plan& plan, Validation& v) {
  for (size_t i = 0; i < plan.variants.size(); ++i) {
    const Variant& var = plan.variants[i];
    const std::string field = "variants[" + std::to_string(i) + "].plugin_sha256";
    std::string found;
    try {
      // A Python plugin is its source tree (digested as a whole); a built one a file, read
      // without following links.
      found = var.is_python() ? plugin_digest(run_dir, var) : run.sha256(var.plugin);
    } catch (const std::exception& e) {
      found = e.what();
    }
    if (found != var.plugin_sha256)
      v.problems.push_back({"plugin-file", printable(var.plugin), field, var.plugin_sha256, found});
  }
}

// Adaptive rounds: only the conditional blocks the rule calls for count. A result for any other
// one is a problem: it measured a block that should not have run. A required block without a
// result stays an outcome without one: the sweep is incomplete.
void keep_required_blocks(const fs::path& run_dir, const Plan& plan, const BlockRule& rule,
                          Validation& v) {
  if (plan.schedule.until_decided == 0) return;
  if (!rule) throw Error("validating " + run_dir.string() + ": no rule for its adaptive blocks");
  const AdaptiveBlocks blocks = rule(plan, v.outcomes);
  std::vector<ArmOutcome> kept;
  for (auto& o : v.outcomes) {
    // While an arm in effect has no valid result the rule cannot decide the blocks not required
    // yet (the sweep is incomplete): a result of one is kept, not judged.
    const bool undecidable = blocks.waiting_at >= 0 && o.task.conditional;
    if (in_effect(o.task, blocks) || (undecidable && o.result)) {
      kept.push_back(std::move(o));
    } else if (o.result) {
      v.problems.push_back(
          {kUnrequiredBlock,
           result_path(run_dir, o.task).lexically_relative(run_dir).generic_string(),
           "invocation.round",
           "no result: the adaptive rule did not call for block " + std::to_string(o.task.round) +
               " of " + o.task.shape,
           "a result"});
    }
  }
  v.outcomes = std::move(kept);
}

}  // namespace

Validation validate_run(const fs::path& run_dir, const Plan& plan_as_read, const BlockRule& blocks,
                        const Validation* earlier) {
  Validation v;
  const RunDirFs run(run_dir);
  // Results bind to the plan file as it is now; one that changed since this command read it is a
  // problem of its own.
  Plan plan = plan_as_read;
  const std::string plan_sha = run.sha256("plan.json");
  if (!plan.file_sha256.empty() && plan.file_sha256 != plan_sha)
    v.problems.push_back(
        {"plan-digest", "plan.json", "", plan.file_sha256 + " (as read before)", plan_sha});
  plan.file_sha256 = plan_sha;
  check_plugins(run_dir, run, plan, v);

  const PlanIndex index(plan);
  std::unordered_map<std::string, const Task*> planned;  // relative result path -> task
  planned.reserve(plan.tasks.size());
  for (const auto& t : plan.tasks) planned[result_rel(t).generic_string()] = &t;
  const std::set<std::string> present = scan_results(run, index, planned, v);
  const Earlier before = earlier_results(earlier);
  const auto logged = logged_shapes(run);
  const auto lane_nodes = lane_nodes_of(run, plan, v);
  static const std::vector<NodeRecord> none;

  Sha256 set_digest;
  set_digest.field("abharness-result-set-v1").field(plan_sha);
  std::map<std::string, std::string> seen_payloads;  // payload digest -> file (duplicates)
  v.outcomes.reserve(plan.tasks.size());
  for (const auto& t : plan.tasks) {
    ArmOutcome o;
    o.task = t;
    const std::string rel = result_rel(t).generic_string();
    if (!present.count(rel)) {
      o.failure = logged && !logged->count(t.shape) ? "not run" : failure_reason(run, t);
      v.outcomes.push_back(std::move(o));
      continue;
    }
    FileStamp stamp;
    auto nodes = lane_nodes.find(t.gpu);
    std::optional<ArmResult> r = checked_result(
        run, index, t, rel, before, nodes == lane_nodes.end() ? none : nodes->second, v, stamp);
    if (r) {
      auto [it, fresh] = seen_payloads.emplace(r->payload_sha256, rel);
      if (!fresh) {
        v.problems.push_back({"duplicate-result", rel, "payload_sha256", "a result of its own",
                              "a copy of " + it->second});
      } else {
        set_digest.field(rel).field(r->payload_sha256);
        v.stamps[rel] = stamp;
        o.result = std::move(r);
      }
    }
    if (!o.result) o.failure = "result failed provenance validation";
    v.outcomes.push_back(std::move(o));
  }
  check_shape_consistency(v, v.problems);
  v.result_set_digest = set_digest.hex();
  keep_required_blocks(run_dir, plan, blocks, v);
  return v;
}

}  // namespace abh
