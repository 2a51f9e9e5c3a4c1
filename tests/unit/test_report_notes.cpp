// The report's notes (report_notes.hpp): each kind from the data it states (the range of the
// reference clocks, the geometric mean of the clock gaps, the shapes left as measured, the few
// degrees of freedom of undecided shapes), derived again from report.json, and worded alike by
// every format that shows them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <variant>

#include "model/timing.hpp"
#include "report/adaptive.hpp"
#include "report/markdown.hpp"
#include "report/report_notes.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

ShapeRow row_of(const std::string& shape, Verdict v) {
  ShapeRow row;
  row.shape = shape;
  row.verdict = v;
  return row;
}

}  // namespace

TEST_CASE("report notes: the reference clocks' range and the geometric mean of the clock gaps") {
  Report r;
  ShapeRow a = row_of("a", Verdict::same), b = row_of("b", Verdict::same);
  a.reference_mhz = 1500;
  a.clock_gap = -0.1;
  b.reference_mhz = 1400;
  b.clock_gap = 0.1;
  r.shapes = {a, row_of("c", Verdict::same), b};
  const auto notes = report_notes(r);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == ReportNote{note::AtOneClock{2, 1400, 1500}});
  const auto* gap = std::get_if<note::ClockGap>(&notes[1]);
  REQUIRE(gap);
  CHECK(gap->shapes == 2);
  // Geometric: 0.9 and 1.1 average to sqrt(0.99), half a percent low; arithmetic would say 0.
  CHECK(gap->mean == doctest::Approx(std::sqrt(0.99) - 1).epsilon(1e-12));
  CHECK(fmt::note_text(notes[0]).rfind("2 shape(s) compared at one SM clock each (1400-1500 MHz,",
                                       0) == 0);
  CHECK(fmt::note_text(notes[1]) ==
        "the candidate's arms ran at a 0.5% lower median SM clock than the baseline's, averaged "
        "over 2 shape(s)");
  for (const auto& n : notes) CHECK(topic(n) == NoteTopic::clock);

  // One reference clock is said as one; a gap below -1 % says what it costs.
  r.shapes = {a};
  const auto one = report_notes(r);
  REQUIRE(one.size() == 2);
  CHECK(fmt::note_text(one[0]).find("(1500 MHz, the median") != std::string::npos);
  CHECK(fmt::note_text(one[1]).find("10.0% lower") != std::string::npos);
  CHECK(fmt::note_text(one[1]).find("it likely draws more power") != std::string::npos);
}

TEST_CASE("report notes: a shape left as measured names its unclocked arms") {
  Plan p = make_plan(1);
  const auto outcomes = outcomes_with_unclocked_b(p);
  Report r = build_report(p, outcomes, {}, "d");
  const note::NotAtOneClock want{p.shapes[0].id, {"B"}};
  CHECK(std::count(r.notes.begin(), r.notes.end(), ReportNote{want}) == 1);
  for (const auto& n : r.notes) CHECK_FALSE(std::holds_alternative<note::AtOneClock>(n));
  CHECK(fmt::note_text(want) == p.shapes[0].id +
                                    " compared as measured, not at one clock: arm(s) B recorded "
                                    "no clock readings");
  // Asked to compare raw times, nothing was left out of a comparison at one clock.
  StatsOptions raw;
  raw.clock_normalize = false;
  for (const auto& n : build_report(p, outcomes, raw, "d").notes)
    CHECK_FALSE(std::holds_alternative<note::NotAtOneClock>(n));
}

TEST_CASE("report notes: undecided shapes on fewer than 4 degrees of freedom are counted") {
  Report r;
  r.sol.notes = {"CPU run, no GPU spec (4 shapes)"};
  const std::vector<std::pair<Verdict, double>> shapes = {{Verdict::faster, 1},
                                                          {Verdict::unstable, 3},
                                                          {Verdict::ambiguous, 2},
                                                          {Verdict::unstable, 4}};
  for (const auto& [verdict, df] : shapes) {
    ShapeRow row = row_of("s" + std::to_string(r.shapes.size()), verdict);
    row.variation = ArmVariation{0.01, df};
    r.shapes.push_back(row);
  }
  const auto notes = report_notes(r);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == ReportNote{note::NoSpeedOfLight{"CPU run, no GPU spec (4 shapes)"}});
  CHECK(topic(notes[0]) == NoteTopic::speed_of_light);
  CHECK(notes[1] == ReportNote{note::FewArmDegrees{2, "s1", 3}});
  CHECK(topic(notes[1]) == NoteTopic::interval);
  CHECK(fmt::note_text(notes[1]).rfind(
            "2 undecided shape(s) (s1, ...) know how much whole arms differ from at most 3 "
            "degree(s) of freedom",
            0) == 0);
}

TEST_CASE("report notes: derived again from report.json, and worded alike in every format") {
  Plan p = make_plan(1);
  const double mhz[3] = {1500, 1400, 1500};
  Report r = build_report(p, clocked_outcomes(p, mhz), {}, "d");
  REQUIRE(r.notes.size() >= 2);
  CHECK(std::holds_alternative<note::AtOneClock>(r.notes[r.notes.size() - 2]));
  CHECK(std::holds_alternative<note::ClockGap>(r.notes.back()));
  const json j = to_json(r);
  CHECK_FALSE(j.contains("notes"));  // report.json stays as it was: the notes are derived
  CHECK(report_from_json(j, "report.json").notes == r.notes);
  const std::string terminal = render(r, "terminal", {}), md = render(r, "markdown", {});
  for (const auto& n : r.notes) {
    CHECK(terminal.find(fmt::note_text(n) + "\n") != std::string::npos);
    CHECK(md.find(markdown::esc(fmt::note_text(n)) + ".\n") != std::string::npos);
  }
  CHECK(terminal.find("\nclock: the candidate's arms ran at a") != std::string::npos);
  CHECK(md.find("\nClock: the candidate's arms ran at a") != std::string::npos);
}

TEST_CASE("report notes: drift-judged shapes, one-arm verdicts and the extra blocks that ran") {
  Report r;
  r.provenance.schedule.rounds = 1;
  r.provenance.schedule.until_decided = 3;
  // A one-block shape judged on its drift-widened interval that kept its verdict, one that did
  // not, a one-arm slower verdict, and a shape confirmed by an extra block.
  ShapeRow kept = row_of("kept", Verdict::faster), lost = row_of("lost", Verdict::unstable);
  kept.drift_ci = Interval{2.4, 4.0};
  lost.drift_ci = Interval{0.99, 1.04};
  ShapeRow one = row_of("one", Verdict::slower), two = row_of("two", Verdict::slower);
  for (ShapeRow* row : {&kept, &lost, &one, &two})
    row->arms = {ok_arm("A1", "baseline"), ok_arm("B", "candidate"), ok_arm("A2", "baseline")};
  for (const char* name : {"A3", "B'", "A4"})
    two.arms.push_back(ok_arm(name, name[0] == 'B' ? "candidate" : "baseline", 0, 1));
  // kept is faster on one candidate arm as well: unconfirmed, like one.
  r.shapes = {kept, lost, one, two};
  const auto notes = report_notes(r);
  REQUIRE(notes.size() == 3);
  CHECK(notes[0] == ReportNote{note::DriftJudged{2, 1, "kept"}});
  CHECK(notes[1] == ReportNote{note::Unconfirmed{2, "kept"}});
  CHECK(notes[2] == ReportNote{note::ExtraBlocks{1, 1, 3, 1, 3}});
  for (const auto& n : notes) CHECK(topic(n) == NoteTopic::interval);
  CHECK(fmt::note_text(notes[0]).find("1 of them kept a verdict") != std::string::npos);
  CHECK(fmt::note_text(notes[1]).find("the gate counts them as undecided") != std::string::npos);
  CHECK(fmt::note_text(notes[2]).rfind("1 extra block(s) ran on 1 shape(s), 3 arm(s)", 0) == 0);
  CHECK(unconfirmed_verdict(one, 1.5));
  CHECK_FALSE(unconfirmed_verdict(two, 1.5));
  CHECK(candidate_arms(two) == 2);
}

TEST_CASE("report notes: undecided shapes that no block left could decide") {
  Report r;
  r.provenance.schedule.rounds = 1;
  r.provenance.schedule.until_decided = 3;
  // Two shapes at +-3 % after two blocks (futile_width: about +-2 % after the two more), one at
  // +-0.5 %, and one at +-3 % that already had all four of its blocks.
  ShapeRow wide = row_of("wide", Verdict::ambiguous), wider = row_of("wider", Verdict::unstable),
           narrow = row_of("narrow", Verdict::ambiguous), done = row_of("done", Verdict::ambiguous);
  for (ShapeRow* row : {&wide, &wider, &narrow, &done}) {
    row->arms = {ok_arm("A1", "baseline"),        ok_arm("B", "candidate"),
                 ok_arm("A2", "baseline"),        ok_arm("A3", "baseline", 0, 1),
                 ok_arm("B2", "candidate", 0, 1), ok_arm("A4", "baseline", 0, 1)};
    row->ci = Interval{0.97, 1.03};
    row->variation = ArmVariation{1e-4, 14};
  }
  narrow.ci = Interval{0.995, 1.005};
  for (int block = 2; block < 4; ++block)
    for (const char* name : {"A", "B", "A"})
      done.arms.push_back(ok_arm(name, name[0] == 'B' ? "candidate" : "baseline", 0, block));
  r.shapes = {narrow, wide, done, wider};
  // Plans before the rule withheld blocks: only the note of done's extra blocks.
  REQUIRE(report_notes(r).size() == 1);
  CHECK(std::holds_alternative<note::ExtraBlocks>(report_notes(r)[0]));
  r.provenance.schedule.futility = true;
  const auto notes = report_notes(r);
  REQUIRE(notes.size() == 2);
  const auto* w = std::get_if<note::Withheld>(&notes[1]);
  REQUIRE(w);
  CHECK(w->shapes == 2);
  CHECK(w->first_shape == "wide");
  CHECK(w->first_expected == doctest::Approx(std::expm1(*futile_width(wide, 2, r.stats))));
  CHECK(topic(notes[1]) == NoteTopic::interval);
  CHECK(fmt::note_text(notes[1]).rfind("2 undecided shape(s) (wide, ...) got no more blocks", 0) ==
        0);
}

TEST_CASE("report notes: a one-arm verdict is decisive only when GPU-timed and beyond the factor") {
  auto one_arm = [](const char* shape, Verdict v, Interval ci, const char* timer) {
    ShapeRow row = row_of(shape, v);
    row.ci = ci;
    row.arms = {ok_arm("A1", "baseline"), ok_arm("B", "candidate"), ok_arm("A2", "baseline")};
    for (auto& a : row.arms) a.timer = timer;
    return row;
  };
  const ShapeRow fast = one_arm("fast", Verdict::faster, {8.1, 8.3}, "cupti");
  const ShapeRow slow = one_arm("slow", Verdict::slower, {0.40, 0.66}, "graph");
  const ShapeRow near = one_arm("near", Verdict::faster, {1.45, 1.60}, "cupti");
  const ShapeRow host = one_arm("host", Verdict::faster, {8.1, 8.3}, "launch");
  const ShapeRow cpu = one_arm("cpu", Verdict::slower, {0.10, 0.12}, "steady");
  CHECK(decisive_one_arm(fast, 1.5));
  CHECK(decisive_one_arm(slow, 1.5));
  CHECK_FALSE(decisive_one_arm(near, 1.5));  // its lower end is within 1.5x
  CHECK_FALSE(decisive_one_arm(host, 1.5));  // host time: a disturbed process can fake it
  CHECK_FALSE(decisive_one_arm(cpu, 1.5));
  CHECK_FALSE(decisive_one_arm(fast, 0));  // off
  CHECK_FALSE(unconfirmed_verdict(fast, 1.5));
  CHECK(unconfirmed_verdict(fast, 0));
  CHECK(unconfirmed_verdict(near, 1.5));
  // A drift-widened interval is the one judged.
  ShapeRow widened = fast;
  widened.drift_ci = Interval{1.2, 9.0};
  CHECK_FALSE(decisive_one_arm(widened, 1.5));

  Report r;
  r.stats.decisive_factor = 1.5;
  r.shapes = {fast, near, slow, host};
  const auto notes = report_notes(r);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == ReportNote{note::Unconfirmed{2, "near"}});
  CHECK(notes[1] == ReportNote{note::Decisive{2, "fast", 1.5}});
  CHECK(fmt::note_text(notes[1]).find("wholly beyond 1.50x") != std::string::npos);
}

TEST_CASE("report notes: --share-host is noted where the run held the host, and read back") {
  Report r;
  r.shapes = {row_of("a", Verdict::same)};
  r.provenance.machine.resize(1);  // one CPU lane: no GPU
  CHECK(report_notes(r).empty());
  r.provenance.schedule.share_host = true;
  const auto notes = report_notes(r);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == ReportNote{note::SharedHost{}});
  CHECK(topic(notes[0]) == NoteTopic::interval);
  CHECK(fmt::note_text(notes[0]).rfind("measured with --share-host: other runs", 0) == 0);

  // A GPU lane timing kernels held no host lock: nothing was shared, nothing is noted...
  r.provenance.machine[0].gpu = GpuInfo{};
  CHECK(report_notes(r).empty());
  // ...but launch timing holds it.
  r.shapes[0].timing = kTimingLaunch;
  CHECK(report_notes(r).size() == 1);

  // The schedule keeps the choice in JSON only when made, and reads it back.
  CHECK_FALSE(to_json(ScheduleOptions{}).contains("share_host"));
  const json j = to_json(r.provenance.schedule);
  CHECK(j.at("share_host") == true);
  CHECK(schedule_options_from_json(j, "report.json: schedule").share_host);
}
