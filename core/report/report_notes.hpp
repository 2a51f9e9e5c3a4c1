// The notes a report makes about its own figures: a closed set of kinds (ReportNote in
// report.hpp), each with the data it states, as hyperfine's warnings are. They are computed from
// the rest of the report, once, by report_notes(): the builder calls it, and so does
// report_from_json, so report.json needs no copy of them and a report re-rendered from it states
// the same notes. Every renderer takes its notes from here, in this order, and words each one
// with note_text (report_render.hpp); none decides on its own what to note.
#pragma once

#include <vector>

#include "report/report.hpp"

namespace abh {

// In the order renderers show them: why shapes lack a speed-of-light time, then what clock
// normalization did (the shapes at one clock and the range of their reference clocks, each shape
// left as measured, the candidate's average clock against the baseline's), then whether other
// runs may have measured beside this one (--share-host), then undecided shapes
// whose intervals rest on few degrees of freedom, one-block shapes judged with their drift,
// verdicts resting on one candidate arm, shapes judged on their own arms for a prior conflict,
// arms left out as disturbed, and the extra blocks that ran.
std::vector<ReportNote> report_notes(const Report& r);

// The shape's valid candidate arms.
int candidate_arms(const ShapeRow& row);
// Faster or slower on a single candidate arm, device-timed, with an interval wholly beyond
// `decisive_factor` (StatsOptions::decisive_factor; 0: never): a change no disturbance of one arm
// could fake, decided without a confirmation block.
bool decisive_one_arm(const ShapeRow& row, double decisive_factor);
// Faster or slower on a single candidate arm and not decisive_one_arm: one arm cannot be told
// from one disturbed arm, so such a verdict is confirmed by another block when the run has one
// to give (report/adaptive.hpp) and the gate does not act on it alone (report/gate.hpp).
bool unconfirmed_verdict(const ShapeRow& row, double decisive_factor);

// What a note is about; each format heads it with its own word for the topic.
enum class NoteTopic { speed_of_light, clock, interval };
NoteTopic topic(const ReportNote& n);

}  // namespace abh
