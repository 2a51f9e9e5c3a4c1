// Markdown for a pull request (GitHub-flavoured): the summary a reviewer reads first, then the
// per-shape table, then per-arm details and provenance folded in <details> blocks.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "report/markdown.hpp"
#include "report/report_render.hpp"
#include "system/text.hpp"

namespace abh {

namespace markdown {

namespace {

bool alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// Whether GitHub would turn the text from s[i] on into a reference: "@name" and "@org/team" notify
// that user or team, "#123" and "GH-123" link an issue and record the reference in it.
bool github_reference(const std::string& s, std::size_t i) {
  const auto next = [&](std::size_t k) { return k < s.size() ? s[k] : '\0'; };
  if (s[i] == '@') return alnum(next(i + 1));
  if (s[i] == '#') return std::isdigit(static_cast<unsigned char>(next(i + 1))) != 0;
  return (s[i] == 'G' || s[i] == 'g') && (next(i + 1) == 'H' || next(i + 1) == 'h') &&
         next(i + 2) == '-' && std::isdigit(static_cast<unsigned char>(next(i + 3))) != 0;
}

}  // namespace

std::string esc(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    // Mid-line, only these change meaning; esc() never starts a line, so '#', '-', '+' are safe.
    if (std::string_view("\\`*_[]<>|~&").find(c) != std::string_view::npos) out += '\\';
    if (github_reference(s, i)) {
      // A zero-width space after the '@', '#' or "GH-" (its entity, so that the file shows it):
      // the text still reads "@name", "#123", and GitHub neither notifies nor links. A backslash
      // would not do: GitHub finds references in the rendered text, after escapes are gone.
      const std::size_t head = c == '@' || c == '#' ? 1 : 3;
      out += s.substr(i, head) + kNoReference;
      i += head - 1;
      continue;
    }
    out += c;
  }
  return fmt::one_line(out);
}

std::string code(const std::string& s) {
  std::size_t run = 0, longest = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  std::string body;
  for (char c : fmt::one_line(s)) {
    if (c == '|') body += '\\';
    body += c;
  }
  bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

}  // namespace markdown

namespace {

using markdown::code;
using markdown::esc;

std::string optional_cell(const std::optional<double>& v, int decimals) {
  return v ? fmt::fixed(*v, decimals) : "-";
}

std::string summary(const Report& r) {
  const Summary& s = r.summary;
  const std::string ci = fmt::confidence_label(r.stats.confidence);
  std::string out;
  out += "### abharness: " + fmt::variants_title(r, code) + "\n\n";
  out += "_" + esc(fmt::timing_line(r)) + "_\n\n";
  if (!r.by_timing.empty()) {
    for (const auto& line : fmt::timing_geomeans(r)) out += "- **" + esc(line) + "**\n";
    out += "- Improved: **" + std::to_string(s.improved) + "**, regressed: **" +
           std::to_string(s.regressed) + "** over every timing\n";
    out += "- Verdicts: " + fmt::verdict_counts(s) + "\n";
  } else if (s.geomean) {
    out += "**Geomean speedup " + fmt::ratio(*s.geomean) + "** (" + ci + " " +
           fmt::interval(*s.geomean_ci) + ", " + to_string(*s.geomean_verdict) + ") over " +
           std::to_string(s.shapes_compared) + " of " + std::to_string(s.shapes_total) + " shapes" +
           markdown::esc(fmt::verdict_basis(s, r.stats)) +
           ". Speedup = baseline time / candidate time; above 1 the candidate is faster.\n\n";
    out += "- Improved: **" + std::to_string(s.improved) + "**, regressed: **" +
           std::to_string(s.regressed) + "** (whole interval beyond the \u00b1" +
           fmt::percent(r.stats.noise_band, 1) + " noise band)\n";
    out += "- Verdicts: " + fmt::verdict_counts(s) + "\n";
    out += "- Range: " + fmt::ratio(s.min_speedup->speedup) + " (" + code(s.min_speedup->shape) +
           ") to " + fmt::ratio(s.max_speedup->speedup) + " (" + code(s.max_speedup->shape) + ")\n";
    out += "- Summed-time ratio (whole-model figure): " + fmt::ratio(*s.summed_time_ratio) + " (" +
           ci + " " + fmt::interval(*s.summed_time_ratio_ci) + "), baseline " +
           fmt::duration(*s.baseline_total_ns) + " vs candidate " +
           fmt::duration(*s.candidate_total_ns) + "\n";
  } else {
    out += "**No shape could be compared**: every shape has a failed arm.\n\n";
    out += "- Verdicts: " + fmt::verdict_counts(s) + "\n";
  }
  for (const auto& row : r.shapes)
    if (row.verdict == Verdict::failed)
      out += "- Failed, left out of every aggregate: " + code(row.shape) + ": " + esc(row.failure) +
             "\n";
  for (const auto& row : r.shapes)
    if (!row.throttled_arms.empty())
      out += "- Throttled: " + code(row.shape) + " (" + join(row.throttled_arms, ", ") + ")\n";
  return out + "\n";
}

std::string shape_table(const Report& r) {
  const auto arms = fmt::arm_columns(r);
  const bool sol = fmt::has_sol(r);
  std::string out = "| shape |";
  std::string rule = "|:---|";
  for (const auto& a : arms) {
    out += " " + esc(a) + " |";
    rule += "---:|";
  }
  out += " speedup | " + fmt::confidence_label(r.stats.confidence) + " | drift |" +
         (sol ? " SOL |" : "") + " verdict |\n";
  out += rule + "---:|:---:|---:|" + (sol ? "---:|" : "") + ":---|\n";
  for (const auto& row : r.shapes) {
    out += "| " + code(row.shape) + (row.label.empty() ? "" : " " + esc(row.label)) + " |";
    for (const auto& name : arms) {
      const ArmStats* a = fmt::find_arm(row, name);
      out += " " + fmt::arm_cell(a) + " |";
    }
    out += " " + (row.speedup ? "**" + fmt::ratio(*row.speedup) + "**" : std::string("-")) + " | " +
           (row.ci ? fmt::interval(*row.ci) : "-") + " | " +
           (row.drift ? fmt::drift(*row.drift) : "-") + " | " +
           (sol ? esc(fmt::sol_pair(row)) + " | " : "") + to_string(row.verdict) +
           (row.throttled_arms.empty() ? "" : " (throttled)") + " |\n";
  }
  out += "\n";
  if (sol) out += esc(fmt::sol_legend(r)) + ".\n\n";
  for (const auto& note : r.notes)
    out += fmt::note_heading(topic(note), true) + ": " + esc(fmt::note_text(note)) + ".\n\n";
  return out;
}

// Model grids: the summed time of each precision's per-layer GEMMs, and its ratio to bf16.
std::string layer_table(const Report& r) {
  if (!r.layer) return "";
  std::string out =
      "**Per-layer summary** (the model grid's GEMMs, mean time summed per "
      "precision; a ratio to bf16 below 1 is faster than bf16)\n\n|";
  std::string rule = "|";
  for (const auto& h : fmt::layer_header()) {
    out += " " + esc(h) + " |";
    rule += h == "precision" ? ":---|" : "---:|";
  }
  out += "\n" + rule + "\n";
  for (const auto& p : r.layer->precisions) {
    out += "|";
    for (const auto& c : fmt::layer_row(p)) out += " " + esc(c) + " |";
    out += "\n";
  }
  out += "\n";
  for (const auto& p : r.layer->precisions)
    if (!p.missing.empty()) {
      std::vector<std::string> shapes;
      for (const auto& m : p.missing) shapes.push_back(code(m));
      out += "- " + esc(p.precision) +
             " sums are partial; missing (failed): " + join(shapes, ", ") + "\n";
    }
  if (r.layer->other_shapes > 0)
    out += "- " + std::to_string(r.layer->other_shapes) +
           " shape(s) not from a model grid are in no sum\n";
  return out + "\n";
}

std::string arm_details(const Report& r) {
  const bool sol = fmt::has_sol(r);
  std::string out = "<details><summary>Per-arm measurements</summary>\n\n";
  out += std::string("| shape | arm | median | as measured | min | noise | samples | clock | ") +
         "TFLOP/s | GB/s |" + (sol ? " SOL |" : "") + " tactic | kernels | note |\n";
  out += std::string("|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|") + (sol ? "---:|" : "") +
         ":---|:---|:---|\n";
  for (const auto& row : r.shapes)
    for (const auto& a : row.arms) {
      out += "| " + code(row.shape) + " | " + esc(a.arm) + " (" + a.variant + ") | ";
      if (a.ok) {
        std::vector<std::string> kernels;
        for (const auto& k : a.kernel_names) kernels.push_back(code(k));
        std::string note = esc(a.stop_reason);
        if (a.outlier_ratio)
          note = "**left out as disturbed** (" + fmt::ratio(*a.outlier_ratio) +
                 " its variant's median arm); " + note;
        if (a.throttled)
          note = "**throttled**" + (a.throttle_note.empty() ? "" : ": " + esc(a.throttle_note)) +
                 "; " + note;
        out += fmt::duration(a.median_ns) + " | " + fmt::duration(a.raw_median_ns) + " | " +
               fmt::duration(a.min_ns) + " | " + fmt::percent(a.noise, 2) + " | " +
               std::to_string(a.samples) + " | " + esc(fmt::arm_clock(a)) + " | " +
               optional_cell(a.tflops, 1) + " | " + optional_cell(a.gbps, 1) + " | " +
               (!sol             ? ""
                : a.sol_fraction ? fmt::percent(*a.sol_fraction, 1) + " | "
                                 : "- | ") +
               (a.tactic.empty() ? "-" : code(a.tactic)) + " | " + join(kernels, "<br>") + " | " +
               note + " |\n";
      } else {
        out += "- | - | - | - | - | - | - | - | - | - | " + std::string(sol ? "- | " : "") +
               "failed: " + esc(a.failure) + " |\n";
      }
    }
  return out + "\n</details>\n\n";
}

std::string provenance(const Report& r) {
  const Provenance& p = r.provenance;
  std::string out = "<details><summary>Provenance</summary>\n\n";
  out += "- Run: " + code(p.run_id) + ", created " + esc(p.created_at) + ", abharness " +
         esc(p.harness_version) + "\n";
  out += "- Command: " + code(shell_command(p.command)) + "\n";
  out += "- Repository: " + code(p.repo) + ", plugin target " + code(p.plugin_target) + "\n";
  for (const auto& v : p.variants) {
    const SourceIdentity& id = v.source;
    out += "- " + esc(v.name) + ": requested " + code(id.requested) + ", " + esc(id.kind) + " " +
           code(id.commit) + ", source digest " + code(id.digest);
    if (id.kind == "worktree")
      out += " (tracked diff " + code(id.tracked_diff_sha256) + ", untracked " +
             code(id.untracked_sha256) + ")";
    out += ", plugin SHA-256 " + code(v.plugin_sha256) + "\n";
  }
  out += "- Worker SHA-256: " + code(p.worker_sha256) + "\n";
  for (size_t i = 0; i < p.machine.size(); ++i) {
    const Environment& m = p.machine[i];
    // A Slurm plan promises one machine for every lane; the lanes' nodes are in the results.
    if (std::find(p.machine.begin(), p.machine.begin() + static_cast<long>(i), m) !=
        p.machine.begin() + static_cast<long>(i))
      continue;
    out += "- Machine: " +
           (m.hostname.empty() ? std::string("the node of each Slurm job") : esc(m.hostname)) +
           ", " + esc(m.os) + ", " + esc(m.cpu_model);
    if (m.gpu)
      out += "; GPU " + std::to_string(m.gpu->index) + " " + esc(m.gpu->name) + " " +
             code(m.gpu->uuid);
    if (!m.driver_version.empty()) out += ", driver " + esc(m.driver_version);
    if (!m.cuda_runtime_version.empty()) out += ", CUDA runtime " + esc(m.cuda_runtime_version);
    if (!m.cupti_version.empty()) out += ", CUPTI " + esc(m.cupti_version);
    for (const auto& [lib, version] : m.libraries) out += ", " + esc(lib) + " " + esc(version);
    out += "\n";
  }
  out += "- Schedule: " + esc(p.schedule.name) + ", " + std::to_string(p.schedule.rounds) +
         " round(s), seed " + std::to_string(p.schedule.seed) + "\n";
  out += "- Settings: " + code(to_json(p.settings).dump()) + "\n";
  out += "- Statistics: noise band \u00b1" + fmt::percent(r.stats.noise_band, 2) + ", " +
         fmt::confidence_label(r.stats.confidence) + " from " + std::to_string(r.stats.resamples) +
         " bootstrap resamples, seed " + std::to_string(r.stats.seed) + "\n";
  out += "- Result-set digest: " + code(p.result_set_digest) + "\n";
  return out + "\n</details>\n";
}

}  // namespace

std::string render_markdown(const Report& r, const RenderOptions&) {
  return summary(r) + shape_table(r) + layer_table(r) + arm_details(r) + provenance(r);
}

}  // namespace abh
