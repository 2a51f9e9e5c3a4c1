#include "tactic_cache.hpp"

#include <algorithm>
#include <limits>

#include "model/settings.hpp"
#include "stats/statistics.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"

namespace abh::worker {
namespace {

constexpr int kTacticCacheSchema = 1;
constexpr int kTuneSamples = 5;

// Returns the cached key, or "" when the file is absent, or its entry is stale or foreign.
std::string lookup(const TacticContext& ctx, std::string* note) {
  json j;
  try {
    if (!ctx.run || ctx.cache_file.empty() ||
        ctx.run->kind(ctx.cache_file) == RunDirFs::Kind::absent)
      return "";
    j = ctx.run->read_json(ctx.cache_file, JsonLimits{4u << 20, 8});
  } catch (const std::exception& e) {
    *note = std::string("tactic cache unreadable, re-tuned: ") + e.what();
    return "";
  }
  // Compared as JSON, not through value<int>(): a schema_version of another type is a foreign
  // cache to re-tune, not a type_error that fails the arm.
  if (!j.is_object() || j.value("schema_version", json()) != json(kTacticCacheSchema)) {
    *note = "tactic cache " + ctx.cache_file.string() + " has another schema version: re-tuned";
    return "";
  }
  auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_object() || !entries->contains(ctx.cache_key)) return "";
  const json& e = (*entries)[ctx.cache_key];
  if (!e.is_string()) return "";
  return e.get<std::string>();
}

void store(const TacticContext& ctx, const std::string& key) {
  if (!ctx.run || ctx.cache_file.empty()) return;
  json j{{"schema_version", kTacticCacheSchema}, {"entries", json::object()}};
  try {
    if (ctx.run->kind(ctx.cache_file) != RunDirFs::Kind::absent) {
      json old = ctx.run->read_json(ctx.cache_file, JsonLimits{4u << 20, 8});
      if (old.is_object() && old.value("schema_version", json()) == json(kTacticCacheSchema) &&
          old.contains("entries") && old["entries"].is_object())
        j = old;
    }
  } catch (const std::exception&) {
    // A damaged cache is replaced; the entry we are about to write is the only one we trust.
  }
  j["entries"][ctx.cache_key] = key;
  ctx.run->write_json_atomic(ctx.cache_file, j);
}

}  // namespace

TacticChoice choose_tactic(Problem& problem, Timer& timer, const SampleHooks& hooks, void* stream,
                           const std::string& requested, const TacticContext& ctx) {
  std::vector<std::string> keys = problem.tactic_keys();
  if (keys.empty()) throw Error("the plugin offers no tactic for this problem");
  if (requested == kDefaultTactic) {
    problem.select_tactic(keys[0]);
    return {keys[0], "default: the plugin's first tactic, not tuned"};
  }
  if (requested != "auto") {
    problem.select_tactic(requested);  // the plugin validates it and names the problem
    return {requested, "requested"};
  }
  if (keys.size() == 1) {
    problem.select_tactic(keys[0]);
    return {keys[0], "only tactic"};
  }
  std::string note;
  std::string cached = lookup(ctx, &note);
  if (!cached.empty()) {
    try {
      problem.select_tactic(cached);  // the plugin re-checks it (e.g. cublasLtMatmulAlgoCheck)
      return {cached, "cache hit (" + ctx.cache_file.string() + ")"};
    } catch (const std::exception& e) {
      note = std::string("cached tactic rejected by the plugin, re-tuned: ") + e.what();
    }
  }
  std::string best;
  double best_ns = std::numeric_limits<double>::infinity();
  std::string failures;
  for (const auto& k : keys) {
    try {
      problem.select_tactic(k);
      problem.enqueue(stream);  // one untimed launch so the first sample is not a cold start
      auto samples = timer.measure(kTuneSamples, hooks, [&] { problem.enqueue(stream); });
      double m = median(samples);
      if (m < best_ns) best_ns = m, best = k;
    } catch (const std::exception& e) {
      failures += "\n  " + k + ": " + e.what();
    }
  }
  if (best.empty()) throw Error("every tactic failed:" + failures);
  problem.select_tactic(best);
  store(ctx, best);
  std::string how = "tuned over " + std::to_string(keys.size()) + " candidates";
  if (!note.empty()) how += " (" + note + ")";
  return {best, how};
}

}  // namespace abh::worker
