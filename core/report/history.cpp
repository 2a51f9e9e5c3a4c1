#include "report/history.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "report/report_json.hpp"
#include "report/report_render.hpp"
#include "report/shape_match.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

// A lane's machine as the page names it: the GPU's model, not its UUID, so that the lanes of one
// machine with eight alike GPUs read as one line ("8 × host: NVIDIA H200, driver 580.00").
std::vector<std::string> history_machines(const std::vector<Environment>& lanes) {
  std::vector<std::string> labels;
  std::map<std::string, int> count;
  for (const auto& m : lanes) {
    const std::string l = machine_label(m, /*with_uuid=*/false);
    if (count[l]++ == 0) labels.push_back(l);
  }
  for (auto& l : labels)
    if (count[l] > 1) l = std::to_string(count[l]) + " × " + l;
  return labels;
}

// The SHA-256 of no bytes: the digests of a working tree without tracked changes or untracked
// files (core/git/source_identity.cpp hashes nothing then).
constexpr const char* kHistoryEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

bool history_clean_worktree(const SourceIdentity& id) {
  return id.tracked_diff_sha256 == kHistoryEmptySha256 &&
         id.untracked_sha256 == kHistoryEmptySha256 &&
         std::none_of(id.submodules.begin(), id.submodules.end(),
                      [](const SubmoduleState& s) { return s.dirty; });
}

const Variant* history_variant(const Plan& p, const char* name) {
  for (const auto& v : p.variants)
    if (v.name == name) return &v;
  return nullptr;
}

HistoryRun history_run(const HistorySource& s) {
  HistoryRun r;
  static_cast<RunHeadline&>(r) = run_headline(s.report, s.run_dir);
  const Plan& p = s.plan;
  r.run_nonce = p.run_nonce;
  r.report_link = s.report_link;
  if (const Variant* c = history_variant(p, "candidate")) {
    r.candidate_commit = c->source.commit;
    r.candidate_kind = c->source.kind;
    r.commit_label = c->source.commit.substr(0, 7);
    // A working tree is its HEAD commit plus the digests of its changes (identity.hpp); with
    // none (both digests over nothing, no dirty submodule) it measured that commit.
    if (c->source.kind == "worktree" && !history_clean_worktree(c->source))
      r.commit_label += "-dirty";
  }
  r.machines = history_machines(p.machine);
  r.repo = p.repo;
  r.plugin_target = p.plugin_target;
  return r;
}

std::vector<std::string> history_notes(const std::vector<HistoryRun>& runs,
                                       const std::vector<HistoryShape>& shapes) {
  std::set<std::string> repos, targets;
  for (const auto& r : runs) repos.insert(r.repo), targets.insert(r.plugin_target);
  std::vector<std::string> notes;
  // The same shape id in two repositories, or two plugins of one, is not the same measurement,
  // yet the page draws it as one line.
  if (repos.size() > 1)
    notes.push_back("the runs measure different repositories: " +
                    join({repos.begin(), repos.end()}, ", "));
  if (targets.size() > 1)
    notes.push_back("the runs measure different targets: " +
                    join({targets.begin(), targets.end()}, ", "));
  const auto partial = std::count_if(shapes.begin(), shapes.end(), [&](const HistoryShape& s) {
    return s.points.size() < runs.size();
  });
  if (partial > 0)
    notes.push_back(std::to_string(partial) + " of " + std::to_string(shapes.size()) +
                    " shape(s) are missing from some run (their charts have gaps there)");
  return notes;
}

}  // namespace

HistoryPage build_history(const std::vector<HistorySource>& sources) {
  if (sources.empty()) throw UsageError("history: give at least one run directory");
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  // ISO 8601 UTC times of one format sort as text.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sources[a].plan.created_at < sources[b].plan.created_at;
  });
  HistoryPage h;
  h.stats = sources.front().report.stats;
  ShapeMatch match;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const HistorySource& s = sources[order[i]];
    h.runs.push_back(history_run(s));
    for (const auto& row : s.report.shapes) {
      const auto [at, fresh] = match.place(row, i);
      if (fresh) h.shapes.push_back({row.shape, row.label, row.timing, {}});
      h.shapes[at].points.push_back({static_cast<int>(i), static_cast<const ShapeEstimate&>(row)});
    }
  }
  h.notes = history_notes(h.runs, h.shapes);
  std::vector<std::string> labels;
  for (const auto& r : h.runs) labels.push_back(r.run_id + " (" + r.commit_label + ")");
  for (std::string& note : match.notes(labels)) h.notes.push_back(std::move(note));
  return h;
}

namespace {

json history_run_json(const HistoryRun& r) {
  json j{{"run_nonce", r.run_nonce},           {"report_link", r.report_link},
         {"commit_label", r.commit_label},     {"candidate_commit", r.candidate_commit},
         {"candidate_kind", r.candidate_kind}, {"repo", r.repo},
         {"plugin_target", r.plugin_target}};
  put_headline(j, r);
  return j;
}

HistoryRun history_run_from_json(const json& j, const std::string& w) {
  HistoryRun r;
  read_headline(j, w, r);
  r.run_nonce = field<std::string>(j, "run_nonce", w);
  r.report_link = field<std::string>(j, "report_link", w);
  r.commit_label = field<std::string>(j, "commit_label", w);
  r.candidate_commit = field<std::string>(j, "candidate_commit", w);
  r.candidate_kind = field<std::string>(j, "candidate_kind", w);
  r.repo = field<std::string>(j, "repo", w);
  r.plugin_target = field<std::string>(j, "plugin_target", w);
  return r;
}

}  // namespace

json to_json(const HistoryPage& h) {
  json runs = json::array(), shapes = json::array();
  for (const auto& r : h.runs) runs.push_back(history_run_json(r));
  for (const auto& s : h.shapes) {
    json points = json::array();
    for (const auto& p : s.points) {
      json j = to_json(p.estimate);
      j["run"] = p.run;
      points.push_back(std::move(j));
    }
    shapes.push_back(
        json{{"shape", s.shape}, {"label", s.label}, {"timing", s.timing}, {"points", points}});
  }
  return json{{"schema_version", h.schema_version},
              {"stats", to_json(h.stats)},
              {"runs", runs},
              {"shapes", shapes},
              {"notes", h.notes}};
}

HistoryPage history_from_json(const json& j, const std::string& where) {
  HistoryPage h;
  h.schema_version = schema_version(j, where, kHistorySchemaVersion, "history");
  h.stats = stats_options_from_json(object_field(j, "stats", where), where + ".stats");
  const json& runs = array_field(j, "runs", where);
  for (std::size_t i = 0; i < runs.size(); ++i)
    h.runs.push_back(history_run_from_json(runs[i], where + ".runs[" + std::to_string(i) + "]"));
  const json& shapes = array_field(j, "shapes", where);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string w = where + ".shapes[" + std::to_string(i) + "]";
    HistoryShape s{field<std::string>(shapes[i], "shape", w),
                   field<std::string>(shapes[i], "label", w),
                   field<std::string>(shapes[i], "timing", w),
                   {}};
    const json& points = array_field(shapes[i], "points", w);
    int previous = -1;
    for (std::size_t k = 0; k < points.size(); ++k) {
      const std::string pw = w + ".points[" + std::to_string(k) + "]";
      const int run = field<int>(points[k], "run", pw);
      // A point names its run by position: one outside `runs`, or out of run order, would be
      // drawn at another run's commit.
      if (run <= previous || run >= static_cast<int>(h.runs.size()))
        throw Error(pw + ": field 'run': " + std::to_string(run) + " is not a run after " +
                    std::to_string(previous) + " of the " + std::to_string(h.runs.size()) +
                    " runs; fix: name each run once, in the order of the top-level 'runs'");
      previous = run;
      s.points.push_back({run, shape_estimate_from_json(points[k], pw)});
    }
    h.shapes.push_back(std::move(s));
  }
  h.notes = string_array(j, "notes", where);
  return h;
}

}  // namespace abh
