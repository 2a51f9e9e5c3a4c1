// Report renderers, registered by format name. Each format lives in its own file
// (render_<format>.cpp) and only formats a Report: no statistic is computed while rendering, so
// every format shows the same numbers. Output is deterministic: the same report gives the same
// bytes (no clock, no locale, no hash-map order).
#pragma once

#include <string>
#include <vector>

#include "report/report.hpp"
#include "report/report_notes.hpp"

namespace abh {

struct RenderOptions {
  bool color = false;  // ANSI colours in the terminal format; the caller sets it from isatty()
};

using RenderFunction = std::string (*)(const Report&, const RenderOptions&);

struct ReportFormat {
  std::string name;       // what --format takes
  std::string extension;  // file name extension in runs/<id>/report.<ext>
  std::string description;
  RenderFunction render;
};

const std::vector<ReportFormat>& report_format_table();
std::vector<std::string> report_formats();
const ReportFormat& report_format(const std::string& name);  // UsageError naming the known ones
std::string render(const Report& r, const std::string& format, const RenderOptions& opt);

std::string render_terminal(const Report& r, const RenderOptions& opt);
std::string render_markdown(const Report& r, const RenderOptions& opt);
std::string render_json(const Report& r, const RenderOptions& opt);
std::string render_csv(const Report& r, const RenderOptions& opt);
// One row per shape and one per arm, the shape's parameters as columns (render_tidy_csv.cpp,
// docs/csv.md); tidy_csv_columns: its fixed columns, in order, before the parameters.
std::string render_tidy_csv(const Report& r, const RenderOptions& opt);
const std::vector<std::string>& tidy_csv_columns();
// The tidy CSV of several comparisons of one run (a variants file: each candidate against the
// baseline), one header, each comparison's rows with its candidate's name in `candidate_name`.
struct TidyComparison {
  std::string candidate_name;
  const Report* report = nullptr;
};
std::string render_tidy_csv(const std::vector<TidyComparison>& comparisons);
std::string render_svg(const Report& r, const RenderOptions& opt);
// A pull-request comment (render_pr.cpp): never more than kPrCommentLimit characters, GitHub's
// limit for one comment, and it starts with kPrMarker, by which a CI job finds its own comment
// to update it (examples/ci/).
std::string render_pr(const Report& r, const RenderOptions& opt);
inline constexpr std::size_t kPrCommentLimit = 65536;
inline constexpr const char* kPrMarker = "<!-- abharness:pr -->";

// Formatting shared by the renderers. All of it is locale-independent (std::to_chars).
namespace fmt {
std::string fixed(double v, int decimals);  // "1.0312"
std::string exact(double v);                // shortest text that reads back to the same double
std::string duration(double ns);  // auto-scaled, 4 significant digits: "812.3 ns", "1.235 ms"
std::string ratio(double v);      // "1.0312x"
std::string interval(const Interval& ci);               // "[1.0290, 1.0335]"
std::string drift(double d);                            // as a signed percent change: "+0.12%"
std::string percent(double fraction, int decimals);     // 0.01 -> "1.0%"
std::string confidence_label(double confidence);        // 0.95 -> "95% CI"
std::string short_id(const std::string& id);            // a digest or commit id, cut to 12 chars
std::string variant_label(const VariantProvenance& v);  // "main (1a2b3c4d5e6f)"
// "baseline main (1a2b3c4d5e6f) vs candidate WORKTREE (...)": each variant's name and label, the
// label passed through `decorate` when given (Markdown sets it in code).
std::string variants_title(const Report& r,
                           std::string (*decorate)(const std::string& label) = nullptr);
// The arm names across all shapes, in first-seen execution order (A1, B, A2 for ABA).
std::vector<std::string> arm_columns(const Report& r);
// An arm's cell in a table of medians: empty without the arm, "failed", or its median, marked
// "(left out)" when the arm was left out as disturbed.
std::string arm_cell(const ArmStats* a);
const ArmStats* find_arm(const ShapeRow& row, const std::string& arm);
std::string verdict_counts(const Summary& s);  // "10 faster, 4 same, ..."
// What the geomean's verdict rests on, when not every compared shape: "; its verdict rests on the
// 3 decided shapes: 1.29x [1.25, 1.33]" (", which the interval over every shape does not confirm"
// when that vetoed its change), or "; no shape is decided, so neither is the geomean". Empty when
// every compared shape is decided.
std::string verdict_basis(const Summary& s, const StatsOptions& opt);
// What the rows timed, one line: "timing: kernel (...)", or with several timings "timings:
// kernel, graph (...)" (model/timing.hpp).
std::string timing_line(const Report& r);
// With several timings, each timing's geomean (docs/statistics.md), one line each: "graph:
// geomean 1.0312x (95% CI [1.0290, 1.0335], faster) over 7 of 7 shapes"; empty with one timing.
std::vector<std::string> timing_geomeans(const Report& r);
// Speed of light (docs/roofline.md). has_sol: some shape has a speed-of-light time (renderers add
// their SOL column only then). sol_pair: "71.2% -> 78.0%", the baseline's and the candidate's mean
// time as a fraction of speed of light, or "-". sol_legend: one sentence saying what the column is
// and where its figures come from. layer_row: the cells of one per-layer summary row (precision,
// GEMMs, baseline sum, candidate sum, baseline / bf16, candidate / bf16, SOL sum).
bool has_sol(const Report& r);
std::string sol_pair(const ShapeRow& row);
std::string sol_legend(const Report& r);
std::vector<std::string> layer_header();
std::vector<std::string> layer_row(const PrecisionSum& p);
// One of the report's notes (Report::notes) as one sentence without a final full stop, the same
// in every format, and the words that head it by its topic (report_notes.hpp): "clock", or
// "Clock" where the heading starts a sentence (Markdown).
std::string note_text(const ReportNote& n);
std::string note_heading(NoteTopic t, bool sentence);
// An arm's median clock and fitted slope, "1452 MHz, slope -0.98", or "-".
std::string arm_clock(const ArmStats& a);
// Text from result files (failure reasons, notes) on one line, with control characters (terminal
// escapes included) replaced by '?': a result file cannot restyle the terminal or break a row.
// So are the characters that hide what text says or that XML refuses: C1 controls, the
// bidirectional marks, embeddings, overrides and isolates (a label reversed by U+202E reads as
// another), and U+FFFE and U+FFFF, which made report.svg ill-formed.
std::string one_line(const std::string& s);
// The length in bytes of such a character at s[i] (a control character, C1 control, bidirectional
// control, U+FFFE or U+FFFF), 0 when there is none.
std::size_t hidden_control_at(const std::string& s, std::size_t i);
// The ANSI colour a terminal shows a verdict in ("" for same: nothing to look at).
const char* verdict_colour(Verdict v);
// CSV (RFC 4180, render_csv.cpp): a field quoted when it holds a comma, a quote or a line break;
// a number in full precision, or an empty field when absent. A text field keeps its line breaks
// and tabs; other hidden characters (hidden_control_at) become '?', and one that a spreadsheet
// would read as a formula (it starts with =, +, -, @, a tab or a carriage return and is not a
// number) is prefixed with an apostrophe (OWASP's advice on CSV injection).
std::string csv_field(const std::string& s);
std::string csv_number(const std::optional<double>& v);
std::string csv_row(const std::vector<std::string>& cells);  // the quoted fields, CRLF-terminated
}  // namespace fmt

}  // namespace abh
