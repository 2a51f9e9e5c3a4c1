// The search of `abharness bisect` (core/bisect/search.hpp) driven by made-up verdicts: an oracle
// says, for each shape, which commit first moved it, and each probe's verdict follows from it
// the way a measurement would. No process, no repository. Last, the spec's JSON mapping.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>

#include "bisect/bisect_report.hpp"
#include "bisect/search.hpp"
#include "system/error.hpp"

namespace abh::bisect {
namespace {

// first_bad: per shape, the commit that made it slower (absent: it never moved).
// unbuildable: commits that do not build. undecided: (shape, commit) pairs whose step against
// good reads `ambiguous`; undecided_bad: the same for the check against bad.
struct Oracle {
  std::map<std::string, int> first_bad;
  std::set<int> unbuildable;
  std::set<std::pair<std::string, int>> undecided, undecided_bad;

  bool slow_at(const std::string& shape, int commit) const {
    auto it = first_bad.find(shape);
    return it != first_bad.end() && commit >= it->second;
  }
  ProbeVerdicts measure(const Probe& p) const {
    ProbeVerdicts v;
    for (const auto& s : p.shapes) {
      const bool base = slow_at(s, p.baseline), cand = slow_at(s, p.candidate);
      std::string verdict = base == cand ? "same" : (cand ? "slower" : "faster");
      if (p.kind == Probe::Kind::step && undecided.count({s, p.candidate})) verdict = "ambiguous";
      if (p.kind == Probe::Kind::check_bad && undecided_bad.count({s, p.baseline}))
        verdict = "unstable";
      v[s] = {verdict, verdict == "slower" ? 0.6 : 1.0, {}, {}};
    }
    return v;
  }
};

struct Run {
  Search search;
  std::vector<Probe> probes;
};

Run run(int bad, std::vector<std::string> shapes, const Oracle& o) {
  Run r{Search(bad, std::move(shapes)), {}};
  while (auto p = r.search.next()) {
    REQUIRE(r.probes.size() < 100);
    r.probes.push_back(*p);
    if (p->kind == Probe::Kind::step && o.unbuildable.count(p->candidate))
      r.search.record_unbuildable(p->candidate, "does not compile");
    else
      r.search.record(*p, o.measure(*p));
  }
  return r;
}

const ShapeSearch& shape(const Search& s, const std::string& id) {
  for (const auto& x : s.shapes())
    if (x.shape == id) return x;
  FAIL("no shape " << id);
  throw;
}

}  // namespace

TEST_CASE("bisect search: one shape moved at every possible commit is found, in log2 steps") {
  for (int bad = 1; bad <= 20; ++bad)
    for (int culprit = 1; culprit <= bad; ++culprit) {
      CAPTURE(bad);
      CAPTURE(culprit);
      const Run r = run(bad, {"a", "b"}, Oracle{{{"a", culprit}}, {}, {}, {}});
      const ShapeSearch& a = shape(r.search, "a");
      CHECK(a.state == ShapeSearch::State::confirmed);
      CHECK(a.hi == culprit);
      CHECK(a.lo == culprit - 1);
      CHECK(a.culprit->verdict == "slower");
      CHECK(shape(r.search, "b").state == ShapeSearch::State::dropped);
      // confirm + ceil(log2(bad)) steps + at most one culprit probe
      int steps = 0;
      for (const auto& p : r.probes) steps += p.kind == Probe::Kind::step;
      CHECK(steps <= static_cast<int>(std::ceil(std::log2(bad))));
      CHECK(r.probes.front().kind == Probe::Kind::confirm);
      CHECK(r.probes.front().shapes == std::vector<std::string>{"a", "b"});
    }
}

TEST_CASE("bisect search: a commit that does not build is skipped, never judged") {
  // Good 0 .. bad 9, commit 4 does not build, commit 6 moved the shape: the first step lands on 4.
  const Run r = run(9, {"s"}, Oracle{{{"s", 6}}, {4}, {}, {}});
  CHECK(r.probes.at(1).candidate == 4);
  CHECK(r.search.unbuildable().count(4) == 1);
  const ShapeSearch& s = shape(r.search, "s");
  CHECK(s.hi == 6);
  CHECK(s.lo == 5);
  CHECK(s.untestable.empty());
  for (size_t i = 2; i < r.probes.size(); ++i) CHECK(r.probes[i].candidate != 4);
}

TEST_CASE("bisect search: when the commits between good and bad do not build, the range is named") {
  // The culprit is 5, and 4 does not build: the answer is "4 or 5", measured 3 against 5.
  const Run r = run(8, {"s"}, Oracle{{{"s", 5}}, {4}, {}, {}});
  const ShapeSearch& s = shape(r.search, "s");
  CHECK(s.state == ShapeSearch::State::confirmed);
  CHECK(s.lo == 3);
  CHECK(s.hi == 5);
  CHECK(r.probes.back().kind == Probe::Kind::culprit);
  CHECK(r.probes.back().baseline == 3);
  CHECK(r.probes.back().candidate == 5);
  BisectSpec spec;
  for (int i = 0; i <= 8; ++i) spec.commits.push_back({std::string(40, 'a' + i), "c"});
  const BisectReport rep = make_bisect_report(spec, r.search, {});
  REQUIRE(rep.shapes.size() == 1);
  CHECK(rep.shapes[0].untestable.size() == 1);
  CHECK(rep.shapes[0].untestable[0].index == 4);
  CHECK(complete(rep));
}

TEST_CASE("bisect search: two shapes moved at different commits share probes and both are found") {
  const Run r = run(8, {"x", "y", "z"}, Oracle{{{"x", 2}, {"y", 7}}, {}, {}, {}});
  CHECK(shape(r.search, "x").hi == 2);
  CHECK(shape(r.search, "x").lo == 1);
  CHECK(shape(r.search, "y").hi == 7);
  CHECK(shape(r.search, "y").lo == 6);
  CHECK(shape(r.search, "z").state == ShapeSearch::State::dropped);
  // The first step (commit 4) measures both shapes at once.
  CHECK(r.probes.at(1).shapes == std::vector<std::string>{"x", "y"});
}

TEST_CASE("bisect search: an undecided step is checked against bad before it steers") {
  // At commit 4 the step against good is ambiguous; against bad the shape reads slower (4 is
  // still good), so the search goes on above 4.
  const Run r = run(8, {"s"}, Oracle{{{"s", 6}}, {}, {{"s", 4}}, {}});
  CHECK(r.probes.at(2).kind == Probe::Kind::check_bad);
  CHECK(r.probes.at(2).baseline == 4);
  CHECK(r.probes.at(2).candidate == 8);
  CHECK(shape(r.search, "s").hi == 6);
  CHECK(shape(r.search, "s").lo == 5);
}

TEST_CASE("bisect search: a commit undecided both ways is skipped for that shape only") {
  const Run r = run(8, {"s", "t"}, Oracle{{{"s", 6}, {"t", 6}}, {}, {{"s", 4}}, {{"s", 4}}});
  const ShapeSearch& s = shape(r.search, "s");
  CHECK(s.untestable.count(4) == 1);
  CHECK(s.hi == 6);
  CHECK(shape(r.search, "t").untestable.empty());
  CHECK(shape(r.search, "t").hi == 6);
  CHECK_FALSE(s.notes.empty());
}

TEST_CASE("bisect search: the culprit pair measured by a step needs no probe of its own") {
  // bad = 1: the confirm probe is good against bad, i.e. the culprit against its parent.
  const Run r = run(1, {"s"}, Oracle{{{"s", 1}}, {}, {}, {}});
  CHECK(r.probes.size() == 1);
  CHECK(shape(r.search, "s").state == ShapeSearch::State::confirmed);
}

TEST_CASE("bisect search: the same verdicts give the same probes (resume and verify replay it)") {
  const Oracle o{{{"a", 3}, {"b", 11}}, {5, 9}, {{"a", 2}}, {}};
  CHECK(run(13, {"a", "b", "c"}, o).probes == run(13, {"a", "b", "c"}, o).probes);
}

TEST_CASE("bisect search: good or bad that does not build is an error") {
  Search s(4, {"a"});
  CHECK_THROWS_AS(s.record_unbuildable(0, "x"), Error);
  CHECK_THROWS_AS(s.record_unbuildable(4, "x"), Error);
  CHECK_THROWS_AS(Search(0, {"a"}), Error);
}

TEST_CASE("bisect spec: --share-host is kept for every probe, and absent from specs without it") {
  BisectSpec spec;
  spec.id = "b";
  spec.good_requested = "HEAD~2";
  spec.bad_requested = "HEAD";
  for (int i = 0; i < 3; ++i) spec.commits.push_back({std::string(40, 'a' + i), "c"});
  spec.repo = "/repo";
  spec.target = "cpu";
  spec.shapes = {"s"};
  spec.gpus = "0";
  spec.start_ahead = spec.until_decided = "auto";
  spec.argv = {"abharness", "bisect"};
  const json plain = to_json(spec);
  CHECK_FALSE(plain.contains("share_host"));  // a spec written before reads as it was
  CHECK(bisect_spec_from_json(plain, "bisect.json") == spec);
  spec.share_host = true;
  const json shared = to_json(spec);
  CHECK(shared.at("share_host") == true);
  CHECK(bisect_spec_from_json(shared, "bisect.json").share_host);
}

}  // namespace abh::bisect
