// What a table that spans finished runs (`compare`, `history`) says of each run: its id and
// directory, when it was planned, its two variants, its machines and its summary's geomean. The
// comparison and the history page each add what only they need (comparison.hpp, history.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/environment.hpp"
#include "report/report.hpp"
#include "system/json_io.hpp"

namespace abh {

struct RunHeadline {
  std::string run_id;
  std::string run_dir;                // the run directory as given on the command line
  std::string created_at;             // the plan's creation time, UTC ISO 8601
  std::string baseline, candidate;    // "main (1a2b3c4d5e6f)", as the report labels them
  std::vector<std::string> machines;  // one label per machine, as the table words it
  int shapes = 0;                     // rows of the run's report
  std::optional<double> geomean;
  std::optional<Interval> geomean_ci;
  std::optional<Verdict> geomean_verdict;
  bool operator==(const RunHeadline&) const = default;
};

// The headline of a run from its report; `machines` is left for the caller to word.
RunHeadline run_headline(const Report& report, const std::string& run_dir);
// "host: NVIDIA H200 GPU-..., driver 580.00" (with_uuid) or "host: NVIDIA H200, driver 580.00";
// the CPU's model for a host without a GPU.
std::string machine_label(const Environment& m, bool with_uuid);

// The headline's fields in (and out of) a JSON object that also holds the caller's own fields.
void put_headline(json& j, const RunHeadline& h);
void read_headline(const json& j, const std::string& where, RunHeadline& h);

}  // namespace abh
