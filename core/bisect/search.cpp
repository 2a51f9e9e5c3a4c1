#include "bisect/search.hpp"

#include <cmath>
#include <sstream>

#include "system/error.hpp"

namespace abh::bisect {

std::string to_string(Probe::Kind k) {
  switch (k) {
    case Probe::Kind::confirm:
      return "confirm";
    case Probe::Kind::step:
      return "step";
    case Probe::Kind::check_bad:
      return "check-bad";
    case Probe::Kind::culprit:
      return "culprit";
  }
  return "?";
}

std::string to_string(ShapeSearch::State s) {
  switch (s) {
    case ShapeSearch::State::confirming:
      return "confirming";
    case ShapeSearch::State::dropped:
      return "dropped";
    case ShapeSearch::State::searching:
      return "searching";
    case ShapeSearch::State::found:
      return "found";
    case ShapeSearch::State::confirmed:
      return "confirmed";
  }
  return "?";
}

namespace {

bool moved(const std::string& verdict) {
  return verdict == "faster" || verdict == "slower";
}

// "same 1.0021x [0.9950, 1.0090]", for notes.
std::string describe(const ShapeVerdict& v) {
  std::ostringstream o;
  o << v.verdict;
  if (v.speedup) o << " " << *v.speedup << "x";
  if (v.lo && v.hi) o << " [" << *v.lo << ", " << *v.hi << "]";
  return o.str();
}

}  // namespace

Search::Search(int bad, std::vector<std::string> shapes) : bad_(bad) {
  if (bad < 1) throw Error("bisect: the bad commit must come after the good one");
  for (auto& id : shapes) {
    ShapeSearch s;
    s.shape = std::move(id);
    s.hi = bad;
    shapes_.push_back(std::move(s));
  }
}

// The commit of the shape's range nearest its middle (the lower one of two) that builds and that
// the shape was not left undecided at.
std::optional<int> Search::midpoint(const ShapeSearch& s) const {
  std::optional<int> best;
  const double mid = (s.lo + s.hi) / 2.0;
  for (int c = s.lo + 1; c < s.hi; ++c) {
    if (unbuildable_.count(c) || s.untestable.count(c)) continue;
    if (!best || std::abs(c - mid) < std::abs(*best - mid)) best = c;
  }
  return best;
}

// A searching shape with nothing left to measure in its range has found its first bad commit;
// when that pair was measured already, the measurement is its confirmation.
void Search::settle(ShapeSearch& s) {
  if (s.state != ShapeSearch::State::searching || s.pending_bad || midpoint(s)) return;
  s.state = ShapeSearch::State::found;
  const auto& m = measured_[s.shape];
  if (auto it = m.find({s.lo, s.hi}); it != m.end()) {
    s.culprit = it->second;
    s.state = ShapeSearch::State::confirmed;
  }
}

std::optional<Probe> Search::next() const {
  auto shapes_where = [&](auto&& pred) {
    std::vector<std::string> ids;
    for (const auto& s : shapes_)
      if (pred(s)) ids.push_back(s.shape);
    return ids;
  };
  using State = ShapeSearch::State;
  for (const auto& s : shapes_)
    if (s.state == State::confirming)
      return Probe{Probe::Kind::confirm, 0, bad_,
                   shapes_where([](const ShapeSearch& x) { return x.state == State::confirming; })};
  for (const auto& s : shapes_)
    if (s.state == State::searching && s.pending_bad) {
      const int c = *s.pending_bad;
      return Probe{Probe::Kind::check_bad, c, bad_, shapes_where([&](const ShapeSearch& x) {
                     return x.state == State::searching && x.pending_bad == c;
                   })};
    }
  for (const auto& s : shapes_)
    if (s.state == State::searching) {
      const int c = *midpoint(s);  // settle() made every searching shape have one
      return Probe{Probe::Kind::step, 0, c, shapes_where([&](const ShapeSearch& x) {
                     return x.state == State::searching && !x.pending_bad && x.lo < c && c < x.hi &&
                            !x.untestable.count(c);
                   })};
    }
  for (const auto& s : shapes_)
    if (s.state == State::found)
      return Probe{Probe::Kind::culprit, s.lo, s.hi, shapes_where([&](const ShapeSearch& x) {
                     return x.state == State::found && x.lo == s.lo && x.hi == s.hi;
                   })};
  return std::nullopt;
}

void Search::record_step(ShapeSearch& s, int commit, const ShapeVerdict& v) {
  if (v.verdict == s.direction) {
    s.hi = commit;
  } else if (v.verdict == "same") {
    s.lo = commit;
  } else {
    s.pending_bad = commit;
    s.notes.push_back("undecided against good at commit " + std::to_string(commit) + " (" +
                      describe(v) + "): measured against bad next");
  }
}

// The commit as baseline, bad as candidate: bad reads like the commit (same) when the commit is
// already bad; it moves the way it moved from good when the commit is still good.
void Search::record_check_bad(ShapeSearch& s, int commit, const ShapeVerdict& v) {
  s.pending_bad.reset();
  if (v.verdict == "same") {
    s.hi = commit;
  } else if (v.verdict == s.direction) {
    s.lo = commit;
  } else {
    s.untestable.insert(commit);
    s.notes.push_back("undecided at commit " + std::to_string(commit) +
                      " against good and against bad (" + describe(v) +
                      "): skipped for this shape");
  }
}

void Search::record(const Probe& p, const ProbeVerdicts& verdicts) {
  using State = ShapeSearch::State;
  for (const auto& id : p.shapes) {
    auto it = verdicts.find(id);
    const ShapeVerdict v = it != verdicts.end() ? it->second : ShapeVerdict{"failed", {}, {}, {}};
    measured_[id][{p.baseline, p.candidate}] = v;
    for (auto& s : shapes_) {
      if (s.shape != id) continue;
      switch (p.kind) {
        case Probe::Kind::confirm:
          s.moved = v;
          if (moved(v.verdict)) {
            s.state = State::searching;
            s.direction = v.verdict;
          } else {
            s.state = State::dropped;
            s.notes.push_back(v.verdict == "same"
                                  ? "did not move between good and bad: " + describe(v)
                                  : "not decided between good and bad (" + describe(v) +
                                        "): not searched");
          }
          break;
        case Probe::Kind::step:
          record_step(s, p.candidate, v);
          break;
        case Probe::Kind::check_bad:
          record_check_bad(s, p.baseline, v);
          break;
        case Probe::Kind::culprit:
          s.culprit = v;
          s.state = State::confirmed;
          if (v.verdict != s.direction)
            s.notes.push_back("the first bad commit against the commit before it read " +
                              describe(v) + ", not " + s.direction);
          break;
      }
    }
  }
  for (auto& s : shapes_) settle(s);
}

void Search::record_unbuildable(int commit, const std::string& why) {
  if (commit == 0 || commit == bad_)
    throw Error(std::string("bisect: the ") + (commit == 0 ? "good" : "bad") +
                " commit does not build, so nothing can be compared with it: " + why);
  unbuildable_[commit] = why;
  for (auto& s : shapes_) settle(s);
}

}  // namespace abh::bisect
