// A comparison across finished runs (`abharness compare`): the per-shape speedups and absolute
// times of several runs side by side, e.g. the same A/B on an H100 and on an H200, or last week's
// run and today's. Each run is its own interleaved A/B/A measurement with its own intervals; the
// runs themselves were measured on different machines or at different times, so a difference
// between two runs' numbers is not a measured speedup and carries no interval. Every rendering
// says so in its title. Built from each run's report (report_builder.hpp), after the run passed
// provenance validation; its one JSON mapping is schemas/compare.schema.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "report/report_render.hpp"
#include "report/run_headline.hpp"
#include "system/json_io.hpp"

namespace abh {

inline constexpr int kCompareSchemaVersion = 1;
inline constexpr const char* kCompareTitle =
    "Comparison across runs (not interleaved: machine and time differ)";

// One run, as the columns of the comparison name it.
// Its machines are named with their GPUs' UUIDs: "host: NVIDIA H200 GPU-..., driver 580.00".
struct ComparedRun : RunHeadline {
  // What the comparison calls the run: its id, or "<id> (<run_dir>)" when another run of the
  // comparison has the same id (one run per machine, each with the id its CI job gave it).
  std::string label;
  std::string result_set_digest;
  bool operator==(const ComparedRun&) const = default;
};

// One shape in one run: what that run's report concluded, or empty when the run did not measure
// the shape.
using ComparedCell = std::optional<ShapeEstimate>;

struct ComparedShape {
  std::string shape;
  std::string label;
  std::vector<ComparedCell> runs;  // one per Comparison::runs, in that order
  bool operator==(const ComparedShape&) const = default;
};

struct Comparison {
  int schema_version = kCompareSchemaVersion;
  StatsOptions stats;  // the options every run's report was computed with
  std::vector<ComparedRun> runs;
  std::vector<ComparedShape> shapes;  // every shape of any run, matched by id, in first-seen order
  // What differs between the runs besides the machine and the time (the repositories and targets
  // measured, the revisions compared, the shapes measured): one sentence each.
  std::vector<std::string> notes;
  bool operator==(const Comparison&) const = default;
};

// One run to compare: its report, built from the validated run, and the directory it came from.
struct RunToCompare {
  Report report;
  std::string run_dir;
};

// `runs` in the order given; two of them may share a run id, never a directory.
Comparison build_comparison(const std::vector<RunToCompare>& runs);

// Whether some shape was measured by two or more of the runs: without one there is nothing to put
// side by side.
bool shares_a_shape(const Comparison& c);

json to_json(const Comparison& c);
Comparison comparison_from_json(const json& j, const std::string& where);

// Renderers, by format name: terminal, markdown, json, csv, svg (render_comparison.cpp).
std::vector<std::string> comparison_formats();
// `extension` of the file `abharness compare --out DIR` writes for `format`, e.g. "md".
std::string comparison_extension(const std::string& format);
// opt.color: the terminal table's verdicts in colour.
std::string render_comparison(const Comparison& c, const std::string& format,
                              const RenderOptions& opt = {});

}  // namespace abh
