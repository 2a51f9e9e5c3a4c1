// The terminal table: what `abharness run` prints at the end of a sweep.
#include <algorithm>

#include "report/report_render.hpp"
#include "report/text_table.hpp"
#include "system/text.hpp"

namespace abh {

namespace text_table {

std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string render(const std::vector<std::vector<Cell>>& rows, bool colour, LastColumn last) {
  std::vector<std::size_t> w;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (w.size() <= c) w.push_back(0);
      w[c] = std::max(w[c], width(row[c].text));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      std::string pad(w[c] - width(row[c].text), ' ');
      // The shape and verdict columns read left to right; numbers align on the right.
      bool left = c == 0 || (c + 1 == row.size() && last == LastColumn::text);
      std::string text = row[c].text;
      if (colour && *row[c].colour) text = row[c].colour + text + "\x1b[0m";
      line += (c ? "  " : "") + (left ? text + pad : pad + text);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace text_table

namespace {

using fmt::verdict_colour;
using text_table::Cell;

std::string table(const std::vector<std::vector<Cell>>& rows, bool colour) {
  return text_table::render(rows, colour);
}

// The phases of the terminal report, in the order it prints them.

std::string title(const Report& r) {
  return "abharness run " + r.provenance.run_id + ": " + fmt::variants_title(r) + "\n" +
         "speedup = baseline time / candidate time (> 1: candidate faster); noise band \u00b1" +
         fmt::percent(r.stats.noise_band, 1) + "\n" + fmt::timing_line(r) + "\n\n";
}

std::string shape_table(const Report& r, const RenderOptions& opt) {
  const auto arms = fmt::arm_columns(r);
  const bool sol = fmt::has_sol(r);
  std::vector<std::vector<Cell>> rows;
  std::vector<Cell> header{{"shape"}};
  for (const auto& a : arms) header.push_back({a});
  for (std::string h :
       {std::string("speedup"), fmt::confidence_label(r.stats.confidence), std::string("drift")})
    header.push_back({h});
  if (sol) header.push_back({"SOL"});
  header.push_back({"verdict"});
  rows.push_back(header);
  for (const auto& row : r.shapes) {
    std::vector<Cell> cells{{row.shape}};
    for (const auto& name : arms) {
      const ArmStats* a = fmt::find_arm(row, name);
      cells.push_back({fmt::arm_cell(a)});
    }
    cells.push_back({row.speedup ? fmt::ratio(*row.speedup) : "-"});
    cells.push_back({row.ci ? fmt::interval(*row.ci) : "-"});
    cells.push_back({row.drift ? fmt::drift(*row.drift) : "-"});
    if (sol) cells.push_back({fmt::sol_pair(row)});
    std::string verdict = to_string(row.verdict);
    if (!row.throttled_arms.empty()) verdict += " [throttled]";
    cells.push_back({verdict, verdict_colour(row.verdict)});
    rows.push_back(std::move(cells));
  }
  std::string out = table(rows, opt.color);
  if (sol) out += fmt::sol_legend(r) + "\n";
  return out + "\n";
}

std::string summary(const Report& r, const RenderOptions& opt) {
  const Summary& s = r.summary;
  std::string out;
  if (s.geomean) {
    std::string verdict = to_string(*s.geomean_verdict);
    if (opt.color && *verdict_colour(*s.geomean_verdict))
      verdict = verdict_colour(*s.geomean_verdict) + verdict + "\x1b[0m";
    out += "geomean speedup    " + fmt::ratio(*s.geomean) + "  " +
           fmt::confidence_label(r.stats.confidence) + " " + fmt::interval(*s.geomean_ci) + "  " +
           verdict + "  (over " + std::to_string(s.shapes_compared) + " of " +
           std::to_string(s.shapes_total) + " shapes" + fmt::verdict_basis(s, r.stats) + ")\n";
    out += "range              " + fmt::ratio(s.min_speedup->speedup) + " (" +
           s.min_speedup->shape + ") .. " + fmt::ratio(s.max_speedup->speedup) + " (" +
           s.max_speedup->shape + ")\n";
    out += "summed-time ratio  " + fmt::ratio(*s.summed_time_ratio) + "  " +
           fmt::confidence_label(r.stats.confidence) + " " +
           fmt::interval(*s.summed_time_ratio_ci) + "  (baseline " +
           fmt::duration(*s.baseline_total_ns) + " / candidate " +
           fmt::duration(*s.candidate_total_ns) + ")\n";
  } else if (!r.by_timing.empty()) {
    for (const auto& line : fmt::timing_geomeans(r)) out += line + "\n";
  } else {
    out += "no shape could be compared: every shape has a failed arm\n";
  }
  out += "improved " + std::to_string(s.improved) + ", regressed " + std::to_string(s.regressed) +
         " (whole interval beyond the band); verdicts: " + fmt::verdict_counts(s) + "\n";
  return out;
}

std::string layer_sums(const Report& r) {
  if (!r.layer) return "";
  std::string out = "\nper-layer GEMMs of the model grid, summed per precision:\n";
  std::vector<std::vector<Cell>> layer;
  std::vector<Cell> head;
  for (const auto& h : fmt::layer_header()) head.push_back({h});
  layer.push_back(head);
  for (const auto& p : r.layer->precisions) {
    std::vector<Cell> cells;
    for (const auto& c : fmt::layer_row(p)) cells.push_back({c});
    layer.push_back(std::move(cells));
  }
  out += table(layer, false);
  if (r.layer->other_shapes > 0)
    out +=
        std::to_string(r.layer->other_shapes) + " shape(s) not from a model grid are in no sum\n";
  return out;
}

// The report's notes, failed shapes and throttled arms.
std::string notes(const Report& r) {
  std::string out;
  for (const auto& note : r.notes)
    out +=
        fmt::note_heading(topic(note), false) + ": " + fmt::one_line(fmt::note_text(note)) + "\n";

  bool failed_header = false;
  for (const auto& row : r.shapes) {
    if (row.verdict != Verdict::failed) continue;
    if (!failed_header) out += "failed shapes (left out of every aggregate):\n";
    failed_header = true;
    out += "  " + row.shape + ": " + fmt::one_line(row.failure) + "\n";
  }
  for (const auto& row : r.shapes) {
    if (row.throttled_arms.empty()) continue;
    out += "throttled: " + row.shape + " (" + join(row.throttled_arms, ", ") + ")\n";
  }
  return out;
}

}  // namespace

std::string render_terminal(const Report& r, const RenderOptions& opt) {
  return title(r) + shape_table(r, opt) + summary(r, opt) + layer_sums(r) + notes(r);
}

}  // namespace abh
