#include "report/comparison.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "report/report_json.hpp"
#include "report/report_render.hpp"
#include "report/shape_match.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

ComparedRun compared_run(const RunToCompare& run) {
  ComparedRun c;
  static_cast<RunHeadline&>(c) = run_headline(run.report, run.run_dir);
  const Provenance& p = run.report.provenance;
  for (const auto& m : p.machine) c.machines.push_back(machine_label(m, /*with_uuid=*/true));
  c.result_set_digest = p.result_set_digest;
  return c;
}

// What differs between the runs besides the machine and the time, said once each.
std::vector<std::string> differences(const std::vector<ComparedRun>& runs,
                                     const std::vector<ComparedShape>& shapes) {
  std::vector<std::string> notes;
  std::set<std::string> baselines, candidates;
  for (const auto& r : runs) baselines.insert(r.baseline), candidates.insert(r.candidate);
  if (baselines.size() > 1)
    notes.push_back("the runs compare different baseline revisions: " +
                    join({baselines.begin(), baselines.end()}, ", "));
  if (candidates.size() > 1)
    notes.push_back("the runs compare different candidate revisions: " +
                    join({candidates.begin(), candidates.end()}, ", "));
  int partial = 0;
  for (const auto& s : shapes)
    for (const auto& c : s.runs)
      if (!c) {
        ++partial;
        break;
      }
  if (partial > 0)
    notes.push_back(std::to_string(partial) + " of " + std::to_string(shapes.size()) +
                    " shape(s) are missing from some run (shown as \"not in run\")");
  return notes;
}

// Each run's label: its id, with its directory where another run has the same id.
void label_runs(std::vector<ComparedRun>& runs) {
  std::map<std::string, int> uses;
  for (const auto& r : runs) ++uses[r.run_id];
  for (auto& r : runs) r.label = uses[r.run_id] > 1 ? r.run_id + " (" + r.run_dir + ")" : r.run_id;
}

// The repositories and targets of the runs, where they differ: the same shape id in two kernels'
// repositories, or two plugins of one, is not the same measurement.
std::vector<std::string> source_differences(const std::vector<RunToCompare>& runs) {
  std::set<std::string> repos, targets;
  for (const auto& r : runs)
    repos.insert(r.report.provenance.repo), targets.insert(r.report.provenance.plugin_target);
  std::vector<std::string> notes;
  if (repos.size() > 1)
    notes.push_back("the runs measure different repositories: " +
                    join({repos.begin(), repos.end()}, ", "));
  if (targets.size() > 1)
    notes.push_back("the runs measure different targets: " +
                    join({targets.begin(), targets.end()}, ", "));
  return notes;
}

}  // namespace

bool shares_a_shape(const Comparison& c) {
  for (const auto& s : c.shapes)
    if (std::count_if(s.runs.begin(), s.runs.end(), [](const auto& cell) { return bool(cell); }) >
        1)
      return true;
  return false;
}

Comparison build_comparison(const std::vector<RunToCompare>& runs) {
  if (runs.size() < 2) throw UsageError("a comparison needs at least two runs");
  Comparison c;
  c.stats = runs.front().report.stats;
  ShapeMatch match;
  for (std::size_t run = 0; run < runs.size(); ++run) {
    const Report& r = runs[run].report;
    c.runs.push_back(compared_run(runs[run]));
    for (const auto& row : r.shapes) {
      const auto [at, fresh] = match.place(row, run);
      if (fresh) c.shapes.push_back({row.shape, row.label, std::vector<ComparedCell>(runs.size())});
      c.shapes[at].runs[run] = static_cast<const ShapeEstimate&>(row);
    }
  }
  label_runs(c.runs);
  c.notes = source_differences(runs);
  std::vector<std::string> labels;
  for (const auto& r : c.runs) labels.push_back(r.label);
  for (std::string& note : match.notes(labels)) c.notes.push_back(std::move(note));
  for (std::string& note : differences(c.runs, c.shapes)) c.notes.push_back(std::move(note));
  return c;
}

namespace {

json to_json(const ComparedRun& r) {
  json j{{"label", r.label}, {"result_set_digest", r.result_set_digest}};
  put_headline(j, r);
  return j;
}

ComparedRun compared_run_from_json(const json& j, const std::string& w) {
  ComparedRun r;
  read_headline(j, w, r);
  r.label = field<std::string>(j, "label", w);
  r.result_set_digest = field<std::string>(j, "result_set_digest", w);
  return r;
}

// A cell is its shape's estimate in that run, flagged present, or the flag alone.
json to_json(const ComparedCell& c) {
  if (!c) return json{{"present", false}};
  json j = to_json(*c);
  j["present"] = true;
  return j;
}

ComparedCell compared_cell_from_json(const json& j, const std::string& w) {
  if (!field<bool>(j, "present", w)) return std::nullopt;
  return shape_estimate_from_json(j, w);
}

}  // namespace

json to_json(const Comparison& c) {
  json runs = json::array(), shapes = json::array();
  for (const auto& r : c.runs) runs.push_back(to_json(r));
  for (const auto& s : c.shapes) {
    json cells = json::array();
    for (const auto& cell : s.runs) cells.push_back(to_json(cell));
    shapes.push_back(json{{"shape", s.shape}, {"label", s.label}, {"runs", cells}});
  }
  return json{{"schema_version", c.schema_version},
              {"title", kCompareTitle},
              {"stats", to_json(c.stats)},
              {"runs", runs},
              {"shapes", shapes},
              {"notes", c.notes}};
}

Comparison comparison_from_json(const json& j, const std::string& where) {
  Comparison c;
  c.schema_version = schema_version(j, where, kCompareSchemaVersion, "comparison");
  c.stats = stats_options_from_json(object_field(j, "stats", where), where + ".stats");
  const json& runs = array_field(j, "runs", where);
  for (std::size_t i = 0; i < runs.size(); ++i)
    c.runs.push_back(compared_run_from_json(runs[i], where + ".runs[" + std::to_string(i) + "]"));
  const json& shapes = array_field(j, "shapes", where);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string w = where + ".shapes[" + std::to_string(i) + "]";
    ComparedShape s{
        field<std::string>(shapes[i], "shape", w), field<std::string>(shapes[i], "label", w), {}};
    const json& cells = array_field(shapes[i], "runs", w);
    if (cells.size() != c.runs.size())
      throw Error(w + ": field 'runs': " + std::to_string(cells.size()) + " cells for " +
                  std::to_string(c.runs.size()) + " runs");
    for (std::size_t k = 0; k < cells.size(); ++k)
      s.runs.push_back(compared_cell_from_json(cells[k], w + ".runs[" + std::to_string(k) + "]"));
    c.shapes.push_back(std::move(s));
  }
  c.notes = string_array(j, "notes", where);
  return c;
}

}  // namespace abh
