// What `abharness bisect` found, as one typed document: bisect-report.json (schemas/
// bisect-report.schema.json), bisect.md and the terminal summary are renderings of it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bisect/search.hpp"
#include "bisect/spec.hpp"

namespace abh::bisect {

// One probe as it ran: its run directory under probes/, or the commit that did not build.
struct ProbeRecord {
  std::string name;  // probes/<name>
  Probe probe;
  bool unbuildable = false;  // the candidate (or baseline) commit did not build
  std::string note;          // why it did not build
  bool operator==(const ProbeRecord&) const = default;
};

struct CommitRef {
  int index = 0;  // on the first-parent path, 0 = good
  std::string sha, subject;
  bool operator==(const CommitRef&) const = default;
};

struct BisectShape {
  std::string shape;
  std::string state;      // to_string(ShapeSearch::State)
  std::string direction;  // slower | faster; empty when dropped
  ShapeVerdict moved;     // bad against good
  // The first bad commit and the last good one before it; the commits between them (first-parent)
  // could not be measured (they do not build, or this shape was undecided there).
  std::optional<CommitRef> first_bad, last_good;
  std::vector<CommitRef> untestable;
  std::optional<ShapeVerdict> culprit;  // last_good against first_bad
  std::vector<std::string> notes;
  bool operator==(const BisectShape&) const = default;
};

struct BisectReport {
  int schema_version = 1;
  std::string id;
  CommitRef good, bad;
  int commits = 0;  // on the first-parent path, good and bad included
  StatsOptions stats;
  std::vector<BisectShape> shapes;     // in the grid's order
  std::vector<CommitRef> unbuildable;  // oldest first
  std::vector<ProbeRecord> probes;     // in the order they ran
  bool operator==(const BisectReport&) const = default;
};

BisectReport make_bisect_report(const BisectSpec& spec, const Search& search,
                                const std::vector<ProbeRecord>& probes);
// Whether every shape that moved has its first bad commit confirmed.
bool complete(const BisectReport& r);
// The shapes whose bad-against-good probe was neither a move nor `same` (unstable, ambiguous):
// whether they moved is not known, so their first bad commit was not searched for.
std::vector<std::string> undecided_shapes(const BisectReport& r);

json to_json(const BisectReport& r);
std::string render_markdown(const BisectReport& r);
std::string render_terminal(const BisectReport& r, bool colour);

}  // namespace abh::bisect
