#include "provenance/provenance.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "report/adaptive.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/sha256.hpp"
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
  return problems.empty() &&
         std::all_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.result; });
}

namespace {

FileStamp stamp_of(const fs::path& p) {
  FileStamp st;
  std::error_code ec;
  st.size = fs::file_size(p, ec);
  auto t = fs::last_write_time(p, ec);
  st.mtime_ns = static_cast<std::int64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  return st;
}

std::string short_json(const json& j) {
  std::string s = j.is_string() ? j.get<std::string>() : j.dump();
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

// The worker ran where the plan placed it: it read the plan's CPUs, its measuring thread was
// pinned to the first of them, and it was seen on no other.
void check_placement(const Task& task, const std::string& file, const Placement& p,
                     std::vector<ProvenanceProblem>& out) {
  if (p.cpus != task.cpus)
    out.push_back({"placement", file, "placement.cpus",
                   format_cpu_list(task.cpus) + " (the plan's)", format_cpu_list(p.cpus)});
  const std::vector<int> host = {task.cpus.empty() ? -1 : task.cpus.front()};
  if (p.affinity != host)
    out.push_back({"placement", file, "placement.affinity", format_cpu_list(host),
                   format_cpu_list(p.affinity)});
  bool elsewhere = p.seen.empty();
  for (int c : p.seen) elsewhere = elsewhere || c != host.front();
  if (elsewhere)
    out.push_back({"placement", file, "placement.seen", "CPU " + format_cpu_list(host) + " only",
                   p.seen.empty() ? "(none recorded)" : format_cpu_list(p.seen)});
}

}  // namespace

std::optional<ArmResult> validate_result(const Plan& plan, const Task& task,
                                         const std::string& file, const json& raw,
                                         std::vector<ProvenanceProblem>& problems) {
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
  if (r.harness_version != plan.harness_version)
    problems.push_back(
        {"harness-version", file, "harness_version", plan.harness_version, r.harness_version});
  const Shape& shape = plan.shape(task.shape);
  Invocation want{plan.run_id,  shape.id,   shape.params,       task.arm,
                  task.variant, task.round, plan.plugin_target, plan.settings};
  diff_json(to_json(want), to_json(r.invocation), "invocation", "invocation", file, problems);
  const Variant& v = plan.variant(task.variant);
  diff_json(to_json(v.source), to_json(r.source), "source", "source-identity", file, problems);
  if (r.plugin_sha256 != v.plugin_sha256)
    problems.push_back({"plugin-sha256", file, "plugin_sha256", v.plugin_sha256, r.plugin_sha256});
  if (r.worker_sha256 != plan.worker_sha256)
    problems.push_back(
        {"worker-sha256", file, "worker_sha256", plan.worker_sha256, r.worker_sha256});
  Environment want_env = plan.machine.at(static_cast<size_t>(task.gpu));
  want_env.libraries = v.libraries;
  diff_json(to_json(want_env), to_json(r.environment), "environment", "environment", file,
            problems);
  check_placement(task, file, r.placement, problems);
  if (r.measurement.samples_ns.empty())
    problems.push_back({"samples", file, "measurement.samples_ns", "at least one sample", "none"});
  // Clock normalization pairs sample i with clock i: a list of another length would misalign all.
  const auto& mhz = r.measurement.clock.sample_mhz;
  if (!mhz.empty() && mhz.size() != r.measurement.samples_ns.size())
    problems.push_back({"samples", file, "measurement.clock.sample_mhz",
                        std::to_string(r.measurement.samples_ns.size()) + " clock readings",
                        std::to_string(mhz.size())});
  if (!r.correctness.passed)
    problems.push_back({"correctness", file, "correctness.passed", "true", "false"});
  if (problems.size() != before) return std::nullopt;
  return r;
}

namespace {

// Lists the files under results/: planned results are returned (run-relative), hidden temp files
// are interrupted atomic writes (the rename never happened) and are listed as leftovers, not
// trusted, and everything else (an unplanned file or directory, a symbolic link) is a problem.
std::set<std::string> scan_results(const fs::path& run_dir, const Plan& plan,
                                   const std::map<std::string, const Task*>& planned,
                                   Validation& v) {
  std::set<std::string> present;
  const fs::path results = run_dir / "results";
  if (!fs::exists(results)) return present;
  for (auto it = fs::recursive_directory_iterator(results); it != fs::end(it); ++it) {
    // Lexical, not fs::relative: that resolves symbolic links and would name a link's target.
    std::string rel = it->path().lexically_relative(run_dir).generic_string();
    if (it->is_symlink()) {
      v.problems.push_back({"unplanned-file", rel, "", "regular files only", "a symbolic link"});
      continue;
    }
    if (it->is_directory()) {
      if (!plan.shapes.empty() &&
          std::none_of(plan.shapes.begin(), plan.shapes.end(), [&](const Shape& s) {
            return it->path().filename() == s.id && it->path().parent_path() == results;
          }))
        v.problems.push_back({"unplanned-file", rel, "", "a planned shape directory", "other"});
      continue;
    }
    std::string name = it->path().filename().string();
    if (name.size() > 1 && name[0] == '.' && name.find(".tmp.") != std::string::npos) {
      v.leftovers.push_back(rel);
      continue;
    }
    if (!planned.count(rel)) {
      v.problems.push_back({"unplanned-file", rel, "", "only planned results/<shape>/<arm>.json",
                            "a file the plan does not list"});
      continue;
    }
    present.insert(rel);
  }
  return present;
}

// The result at `rel` for task `t` when it passes validation; problems go to `v`. A file this
// process already validated (in `earlier`), untouched since (same size and mtime), is not read
// and checked again: resume validates each existing result once.
std::optional<ArmResult> checked_result(const fs::path& run_dir, const Plan& plan, const Task& t,
                                        const std::string& rel, const FileStamp& stamp,
                                        const Validation* earlier, Validation& v) {
  if (earlier) {
    auto it = earlier->stamps.find(rel);
    if (it != earlier->stamps.end() && it->second == stamp)
      for (const auto& e : earlier->outcomes)
        if (e.result && e.task == t) return e.result;
  }
  json raw;
  try {
    raw = read_json_file(run_dir / rel, JsonLimits{64u << 20, 32});
  } catch (const std::exception& e) {
    v.problems.push_back({"result-format", rel, "", "valid JSON", e.what()});
    return std::nullopt;
  }
  return validate_result(plan, t, rel, raw, v.problems);
}

// Why an arm has no result: its failure record under logs/ (a crashed, hung or wrong arm), or
// "not run".
std::string failure_reason(const fs::path& run_dir, const Task& t) {
  fs::path failure = log_path(run_dir, t, "failure.json");
  if (!fs::exists(failure)) return "not run";
  try {
    json f = read_json_file(failure, JsonLimits{1u << 20, 8});
    return f.value("reason", std::string("failed (no reason recorded)"));
  } catch (const std::exception& e) {
    return std::string("failed (failure record unreadable: ") + e.what() + ")";
  }
}

// Adaptive rounds: only the conditional blocks the rule calls for count (report/adaptive.hpp). A
// result for any other one is a problem: it measured a block that should not have run. A
// required block without a result stays an outcome without one: the sweep is incomplete.
void keep_required_blocks(const fs::path& run_dir, const Plan& plan, Validation& v) {
  if (plan.schedule.until_decided == 0) return;
  const AdaptiveBlocks blocks = adaptive_blocks(plan, v.outcomes);
  std::vector<ArmOutcome> kept;
  for (auto& o : v.outcomes) {
    // While an earlier arm has no valid result the rule cannot decide these blocks yet (the sweep
    // is incomplete): a result of one is kept, not judged.
    const bool undecidable = blocks.waiting_at >= 0 && o.task.round >= blocks.waiting_at;
    if (in_effect(o.task, blocks) || (undecidable && o.result)) {
      kept.push_back(std::move(o));
    } else if (o.result) {
      v.problems.push_back(
          {"unrequired-block",
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

Validation validate_run(const fs::path& run_dir, const Plan& plan, const Validation* earlier) {
  Validation v;
  std::map<std::string, const Task*> planned;  // relative result path -> task
  for (const auto& t : plan.tasks)
    planned[result_path(run_dir, t).lexically_relative(run_dir).generic_string()] = &t;
  const std::set<std::string> present = scan_results(run_dir, plan, planned, v);

  Sha256 set_digest;
  set_digest.field("abharness-result-set-v1").field(sha256_file(plan_path(run_dir)));
  std::map<std::string, std::string> seen_payloads;  // payload digest -> file (duplicates)
  for (const auto& t : plan.tasks) {
    ArmOutcome o;
    o.task = t;
    std::string rel = result_path(run_dir, t).lexically_relative(run_dir).generic_string();
    if (!present.count(rel)) {
      o.failure = failure_reason(run_dir, t);
      v.outcomes.push_back(std::move(o));
      continue;
    }
    const FileStamp stamp = stamp_of(run_dir / rel);
    std::optional<ArmResult> r = checked_result(run_dir, plan, t, rel, stamp, earlier, v);
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
  v.result_set_digest = set_digest.hex();
  keep_required_blocks(run_dir, plan, v);
  return v;
}

}  // namespace abh
