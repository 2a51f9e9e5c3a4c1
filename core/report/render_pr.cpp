// The "pr" format: a Markdown comment for a pull request that always fits GitHub's limit of
// 65,536 characters per comment, whatever the number of shapes. What a reviewer needs first is
// bounded by construction (a few shapes per list, every free text cut to a length): the geomean
// with its interval, the regressions, the improvements and the shapes that decide the exit code.
// The full per-shape table fills what is left, folded, and says how many rows it leaves out (the
// run directory's report.md has them all). Provenance and the result-set digest, with the command
// that re-verifies it, close the comment. Sizes are counted in bytes: a comment's characters are
// never more than its UTF-8 bytes.
#include <algorithm>

#include "report/markdown.hpp"
#include "report/report_render.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

using markdown::code;
using markdown::esc;

constexpr std::size_t kListRows = 10;  // shapes named per headline list
constexpr std::size_t kTextCap = 160;  // free text (a reason, a path, a name) is cut to this
constexpr std::size_t kLabelCap = 60;
constexpr std::size_t kMachines = 8;  // machines named in the provenance block

// At most `n` bytes of `s`, cut on a UTF-8 character boundary, with "..." when cut.
std::string clip(const std::string& s, std::size_t n = kTextCap) {
  if (s.size() <= n) return s;
  std::size_t end = n - 3;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end) + "...";
}

std::string clipped_code(const std::string& s) {
  return code(clip(s, 80));
}

std::string shape_cell(const ShapeRow& row) {
  return code(row.shape) + (row.label.empty() ? "" : " " + esc(clip(row.label, kLabelCap)));
}

std::string time_cell(const std::optional<double>& ns) {
  return ns ? fmt::duration(*ns) : "-";
}

// Up to kListRows shapes, most extreme first, as a table; the rest counted.
std::string shape_list(const Report& r, std::vector<const ShapeRow*> rows, const std::string& title,
                       bool ascending) {
  if (rows.empty()) return "";
  std::stable_sort(rows.begin(), rows.end(), [&](const ShapeRow* a, const ShapeRow* b) {
    return ascending ? *a->speedup < *b->speedup : *a->speedup > *b->speedup;
  });
  std::string out = "**" + title + "** (" + std::to_string(rows.size()) + ")\n\n";
  out += "| shape | speedup | " + fmt::confidence_label(r.stats.confidence) +
         " | baseline | candidate |\n|:---|---:|:---:|---:|---:|\n";
  for (std::size_t i = 0; i < rows.size() && i < kListRows; ++i)
    out += "| " + shape_cell(*rows[i]) + " | **" + fmt::ratio(*rows[i]->speedup) + "** | " +
           fmt::interval(*rows[i]->ci) + " | " + time_cell(rows[i]->baseline_ns) + " | " +
           time_cell(rows[i]->candidate_ns) + " |\n";
  if (rows.size() > kListRows)
    out += "\n_... and " + std::to_string(rows.size() - kListRows) +
           " more: see the full table below._\n";
  return out + "\n";
}

std::vector<const ShapeRow*> with_verdict(const Report& r, Verdict v) {
  std::vector<const ShapeRow*> out;
  for (const auto& row : r.shapes)
    if (row.verdict == v) out.push_back(&row);
  return out;
}

// The shapes that decide `abharness run`'s exit code: failed arms make the sweep incomplete (4),
// regressions fail it under --fail-on-regression (5). docs/exit-codes.md.
std::string exit_code_shapes(const Report& r) {
  const auto failed = with_verdict(r, Verdict::failed);
  const int regressed = r.summary.regressed;
  if (failed.empty() && regressed == 0) return "";
  std::string out = "**Shapes that decide the exit code**\n\n";
  if (regressed > 0)
    out += "- " + std::to_string(regressed) +
           " regression(s), listed above: exit 5 under `--fail-on-regression`\n";
  if (!failed.empty()) {
    out += "- " + std::to_string(failed.size()) +
           " shape(s) with a failed arm, left out of every aggregate: exit 4 (incomplete sweep; "
           "`abharness resume` re-runs them)\n";
    for (std::size_t i = 0; i < failed.size() && i < kListRows; ++i)
      out += "  - " + code(failed[i]->shape) + ": " + esc(clip(failed[i]->failure)) + "\n";
    if (failed.size() > kListRows)
      out += "  - ... and " + std::to_string(failed.size() - kListRows) + " more\n";
  }
  return out + "\n";
}

std::string headline(const Report& r) {
  const Summary& s = r.summary;
  std::string out = std::string(kPrMarker) + "\n";
  out += "### abharness: " + fmt::variants_title(r, clipped_code) + "\n\n";
  out += "_" + markdown::esc(fmt::timing_line(r)) + "_\n\n";
  if (!r.by_timing.empty())
    for (const auto& line : fmt::timing_geomeans(r)) out += "- " + markdown::esc(line) + "\n";
  if (!r.by_timing.empty())
    out += "\n";
  else if (s.geomean)
    out += "**Geomean speedup " + fmt::ratio(*s.geomean) + "** (" +
           fmt::confidence_label(r.stats.confidence) + " " + fmt::interval(*s.geomean_ci) + ", " +
           to_string(*s.geomean_verdict) + ") over " + std::to_string(s.shapes_compared) + " of " +
           std::to_string(s.shapes_total) + " shapes" +
           markdown::esc(fmt::verdict_basis(s, r.stats)) +
           "; speedup = baseline time / candidate time (> 1: candidate faster).\n\n";
  else
    out += "**No shape could be compared**: every shape has a failed arm.\n\n";
  out += "Regressed **" + std::to_string(s.regressed) + "**, improved **" +
         std::to_string(s.improved) + "** (whole interval beyond the \u00b1" +
         fmt::percent(r.stats.noise_band, 1) + " noise band); verdicts: " + fmt::verdict_counts(s) +
         "\n\n";
  out += shape_list(r, with_verdict(r, Verdict::slower), "Regressions", true);
  out += shape_list(r, with_verdict(r, Verdict::faster), "Improvements", false);
  return out + exit_code_shapes(r);
}

std::string table_row(const ShapeRow& row) {
  return "| " + shape_cell(row) + " | " + time_cell(row.baseline_ns) + " | " +
         time_cell(row.candidate_ns) + " | " + (row.speedup ? fmt::ratio(*row.speedup) : "-") +
         " | " + (row.ci ? fmt::interval(*row.ci) : "-") + " | " +
         (row.drift ? fmt::drift(*row.drift) : "-") + " | " + to_string(row.verdict) +
         (row.throttled_arms.empty() ? "" : " (throttled)") + " |\n";
}

// The shapes worst first: those without a speedup (a failed arm) first, then by speedup, lowest
// first; ties keep plan order.
std::vector<const ShapeRow*> worst_first(const Report& r) {
  std::vector<const ShapeRow*> rows;
  for (const auto& row : r.shapes) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const ShapeRow* a, const ShapeRow* b) {
    if (!a->speedup || !b->speedup) return !a->speedup && b->speedup;
    return *a->speedup < *b->speedup;
  });
  return rows;
}

// Every shape in a fold: in plan order when all of them fit in `budget` bytes; else worst first
// (worst_first), as many rows as fit, then a count, so the shapes left out are the least
// alarming ones.
std::string full_table(const Report& r, std::size_t budget) {
  const std::string open = "<details><summary>All " + std::to_string(r.shapes.size()) +
                           " shapes</summary>\n\n| shape | baseline | candidate | speedup | " +
                           fmt::confidence_label(r.stats.confidence) +
                           " | drift | verdict |\n|:---|---:|---:|---:|:---:|---:|:---|\n";
  const std::string close = "\n</details>\n\n";
  constexpr std::size_t kNoteReserve = 256;
  if (budget < open.size() + close.size() + kNoteReserve)
    return "_The per-shape table does not fit in one comment: see report.md in the run "
           "directory._\n\n";
  const std::size_t room = budget - open.size() - close.size() - kNoteReserve;
  std::string rows;
  for (const auto& row : r.shapes) rows += table_row(row);
  if (rows.size() <= room) return open + rows + close;
  rows.clear();
  std::size_t shown = 0;
  for (const ShapeRow* row : worst_first(r)) {
    std::string line = table_row(*row);
    if (rows.size() + line.size() > room) break;
    rows += line;
    ++shown;
  }
  const std::string note =
      "\n_Showing the " + std::to_string(shown) + " worst of " + std::to_string(r.shapes.size()) +
      " shapes (failed arms first, then by speedup, lowest first): " +
      std::to_string(r.shapes.size() - shown) +
      " more do not fit in one comment (65,536 characters); report.md, report.json and "
      "report.csv in the run directory hold every shape._\n";
  return open + rows + note + close;
}

// A path without the machine's directories: a PR comment is read by people who do not have the
// runner's file system, and its home and work paths say nothing to them. An absolute path keeps
// its last component ("…/kernels"); in "--flag=/a/b" the value is shortened; other text is kept.
std::string without_machine_dirs(const std::string& arg) {
  const std::size_t eq = arg.rfind('=', arg.find('/'));
  const std::size_t start = arg.compare(0, 2, "--") == 0 && eq != std::string::npos ? eq + 1 : 0;
  if (arg.size() <= start || arg[start] != '/') return arg;
  std::string tail = arg.substr(start);
  while (tail.size() > 1 && tail.back() == '/') tail.pop_back();
  const std::string last = tail.substr(tail.rfind('/') + 1);
  return arg.substr(0, start) + "\u2026/" + last;
}

std::string clipped_provenance(const Report& r) {
  const Provenance& p = r.provenance;
  std::string out = "<details><summary>Provenance</summary>\n\n";
  out += "- Run " + code(clip(p.run_id, 100)) + ", created " + esc(clip(p.created_at, 40)) +
         ", abharness " + esc(clip(p.harness_version, 40)) + "\n";
  std::vector<std::string> command;
  for (const auto& a : p.command) command.push_back(without_machine_dirs(a));
  out += "- Command: " + code(clip(shell_command(command), 400)) + "\n";
  out += "- Repository " + code(clip(without_machine_dirs(p.repo))) + ", plugin target " +
         code(clip(p.plugin_target, 60)) + "\n";
  for (const auto& v : p.variants)
    out += "- " + esc(clip(v.name, 20)) + ": " + code(clip(v.source.requested, 80)) + " = " +
           esc(clip(v.source.kind, 20)) + " " + code(clip(v.source.commit, 64)) +
           ", source digest " + code(clip(v.source.digest, 64)) + ", plugin SHA-256 " +
           code(clip(v.plugin_sha256, 64)) + "\n";
  out += "- Worker SHA-256 " + code(clip(p.worker_sha256, 64)) + "\n";
  for (std::size_t i = 0; i < p.machine.size() && i < kMachines; ++i) {
    const Environment& m = p.machine[i];
    std::string line = m.hostname + ", " + m.os + ", " + m.cpu_model;
    if (m.gpu) line += "; GPU " + std::to_string(m.gpu->index) + " " + m.gpu->name;
    if (!m.driver_version.empty()) line += ", driver " + m.driver_version;
    out += "- Machine: " + esc(clip(line, 240)) + "\n";
  }
  if (p.machine.size() > kMachines)
    out += "- ... and " + std::to_string(p.machine.size() - kMachines) + " more machines\n";
  out += "- Schedule " + esc(clip(p.schedule.name, 20)) + ", " + std::to_string(p.schedule.rounds) +
         " round(s); statistics: noise band \u00b1" + fmt::percent(r.stats.noise_band, 2) + ", " +
         fmt::confidence_label(r.stats.confidence) + " from " + std::to_string(r.stats.resamples) +
         " bootstrap resamples, seed " + std::to_string(r.stats.seed) + "\n";
  out += "\n</details>\n\n";
  out += "Result-set digest " + code(clip(p.result_set_digest, 80)) +
         "; to re-check every result against the plan: " +
         code("abharness verify runs/" + clip(p.run_id, 100)) + "\n";
  return out;
}

}  // namespace

std::string render_pr(const Report& r, const RenderOptions&) {
  const std::string head = headline(r), tail = clipped_provenance(r);
  const std::size_t fixed = head.size() + tail.size();
  std::string out =
      head + full_table(r, fixed < kPrCommentLimit ? kPrCommentLimit - fixed : 0) + tail;
  // Unreachable by construction (the head and tail are bounded well below the limit); if it ever
  // were reached, the comment is cut and says so rather than being refused by GitHub.
  if (out.size() > kPrCommentLimit) {
    const std::string cut = "\n\n_(cut to fit a GitHub comment)_\n";
    out = clip(out, kPrCommentLimit - cut.size()) + cut;
  }
  return out;
}

}  // namespace abh
