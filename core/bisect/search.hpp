// The search of `abharness bisect` as a pure state machine: which commit to measure next, against
// which reference, on which shapes, and what each measured verdict means for each shape's range.
// It starts no process and reads no file, so that the order of probes can be unit-tested with
// made-up verdicts and replayed exactly on resume and verify (the probes' results are the only
// state: the same verdicts give the same next probe).
//
// Commits are indices on the first-parent path: 0 is the good commit, n the bad one.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace abh::bisect {

// What one probe measures: an A/B/A of `baseline` against `candidate` on `shapes`.
struct Probe {
  enum class Kind {
    confirm,    // good against bad on every shape: which shapes moved, and which way
    step,       // good against a commit inside a shape's range
    check_bad,  // a commit against bad, when the step against good left a shape undecided
    culprit     // the first bad commit against the commit before it, for the report's interval
  };
  Kind kind = Kind::confirm;
  int baseline = 0, candidate = 0;
  std::vector<std::string> shapes;  // in the grid's order
  bool operator==(const Probe&) const = default;
};
std::string to_string(Probe::Kind k);

// One shape's verdict in one probe, as the probe's report gives it.
struct ShapeVerdict {
  std::string verdict;  // faster | slower | same | ambiguous | unstable | failed
  std::optional<double> speedup, lo, hi;
  bool operator==(const ShapeVerdict&) const = default;
};
using ProbeVerdicts = std::map<std::string, ShapeVerdict>;  // by shape id; missing: failed

struct ShapeSearch {
  enum class State {
    confirming,  // the confirm probe has not been measured yet
    dropped,     // did not move between good and bad (or could not be decided): not searched
    searching,   // lo < hi - 1 with commits left to measure between them
    found,       // hi is the first bad commit (lo is its first-parent predecessor, or the range's
                 // commits between them could not be measured: `untestable`)
    confirmed    // found, and its culprit probe measured
  };
  std::string shape;
  State state = State::confirming;
  std::string direction;           // the verdict of bad against good: "slower" or "faster"
  ShapeVerdict moved;              // bad against good, as the confirm probe measured it
  int lo = 0, hi = 0;              // lo: the newest commit known good, hi: the oldest known bad
  std::set<int> untestable;        // commits of the range this shape could not be judged at
  std::optional<int> pending_bad;  // a step left it undecided here: measure against bad next
  std::vector<std::string> notes;  // what the search did with it, in words
  std::optional<ShapeVerdict> culprit;  // the culprit probe's verdict (lo against hi)
};
std::string to_string(ShapeSearch::State s);

class Search {
 public:
  // `bad` is n (at least 1); `shapes` the grid's shape ids in order.
  Search(int bad, std::vector<std::string> shapes);

  // The next probe to measure, or none when every shape is dropped or confirmed.
  std::optional<Probe> next() const;
  // Records what `p` (the probe next() returned) measured.
  void record(const Probe& p, const ProbeVerdicts& v);
  // Records that `commit` does not build: no shape can be judged there. Throws abh::Error for the
  // good or bad commit, which the search cannot do without.
  void record_unbuildable(int commit, const std::string& why);

  const std::vector<ShapeSearch>& shapes() const { return shapes_; }
  const std::map<int, std::string>& unbuildable() const { return unbuildable_; }
  int bad() const { return bad_; }

 private:
  std::optional<int> midpoint(const ShapeSearch& s) const;
  void settle(ShapeSearch& s);
  void record_step(ShapeSearch& s, int commit, const ShapeVerdict& v);
  void record_check_bad(ShapeSearch& s, int commit, const ShapeVerdict& v);

  int bad_;
  std::vector<ShapeSearch> shapes_;
  std::map<int, std::string> unbuildable_;
  // Every verdict measured, per shape and (baseline, candidate): a culprit pair measured already
  // (the bad commit's parent is good, or a step hit the pair) needs no probe of its own.
  std::map<std::string, std::map<std::pair<int, int>, ShapeVerdict>> measured_;
};

}  // namespace abh::bisect
