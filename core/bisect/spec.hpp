// bisect.json: what `abharness bisect` was asked, written once when it starts and never edited.
// Everything a resume or a verify needs to replay the search is here or in the probes' run
// directories: the first-parent commits between good and bad (so that a branch moved since does not
// change them), the grid's shapes, and the options every probe is planned with.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/settings.hpp"
#include "model/stats_options.hpp"
#include "system/json_io.hpp"

namespace abh::bisect {

struct BisectCommit {
  std::string sha;      // full commit id
  std::string subject;  // first line of its message
  bool operator==(const BisectCommit&) const = default;
};

struct BisectSpec {
  int schema_version = 1;
  std::string id;                             // the bisect directory's name
  std::string good_requested, bad_requested;  // as typed: "v1.2", "HEAD"
  // The first-parent path, oldest first: commits.front() is good, commits.back() is bad.
  std::vector<BisectCommit> commits;
  std::string repo;  // absolute
  std::string target;
  std::vector<std::string> shapes;  // the grid's shape ids the search starts with (grid.json)
  std::string python, gpus, cpus, start_ahead, until_decided;
  bool share_host = false;  // --share-host of every probe; absent (false) in specs written before
  MeasureSettings settings;
  StatsOptions stats;  // every probe's verdicts are judged with these
  std::vector<std::string> argv;
  bool operator==(const BisectSpec&) const = default;
};

json to_json(const BisectCommit& c);
json to_json(const BisectSpec& s);
// Checks the document against schemas/bisect.schema.json first (file, field and fix named).
BisectSpec bisect_spec_from_json(const json& j, const std::string& where);

// <dir>/bisect.json, and whether a directory holds one (a bisect rather than a run).
std::filesystem::path spec_path(const std::filesystem::path& dir);
bool is_bisect_dir(const std::filesystem::path& dir);
BisectSpec load_spec(const std::filesystem::path& dir);

}  // namespace abh::bisect
