#include "report/report_render.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "model/timing.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

const std::vector<ReportFormat>& report_format_table() {
  // An explicit table rather than self-registering objects: a static library drops object files
  // that nothing references, and with them their registrations.
  static const std::vector<ReportFormat> table = {
      {"terminal", "txt", "aligned table for a terminal (colour when asked)", render_terminal},
      {"markdown", "md", "summary, per-shape table and folded provenance for a pull request",
       render_markdown},
      {"json", "json", "the whole report (schemas/report.schema.json)", render_json},
      {"csv", "csv", "one row per shape, per-arm values in arm-prefixed columns (RFC 4180)",
       render_csv},
      {"tidy-csv", "tidy.csv",
       "one row per shape and per arm, parameters as columns: runs stack (docs/csv.md)",
       render_tidy_csv},
      {"svg", "svg", "per-shape speedup chart with intervals, noise band and drift", render_svg},
      {"pr", "pr.md", "a pull-request comment that always fits GitHub's 65,536 characters",
       render_pr},
  };
  return table;
}

std::vector<std::string> report_formats() {
  std::vector<std::string> names;
  for (const auto& f : report_format_table()) names.push_back(f.name);
  return names;
}

const ReportFormat& report_format(const std::string& name) {
  std::string known;
  for (const auto& f : report_format_table()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  throw UsageError("report format '" + name + "' is unknown: use one of " + known);
}

std::string render(const Report& r, const std::string& format, const RenderOptions& opt) {
  return report_format(format).render(r, opt);
}

namespace fmt {

std::string fixed(double v, int decimals) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (res.ec != std::errc()) throw Error("cannot format number " + std::to_string(v));
  return std::string(buf, res.ptr);
}

std::string exact(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  if (res.ec != std::errc()) throw Error("cannot format number " + std::to_string(v));
  return std::string(buf, res.ptr);
}

std::string duration(double ns) {
  static const char* const units[] = {"ns", "\u00b5s", "ms", "s"};
  double v = ns;
  int unit = 0;
  while (unit < 3 && std::abs(v) >= 1000) {
    v /= 1000;
    ++unit;
  }
  for (;;) {
    int digits = std::abs(v) >= 1 ? static_cast<int>(std::floor(std::log10(std::abs(v)))) + 1 : 1;
    std::string text = fixed(v, std::max(0, 4 - digits));
    // Rounding can carry into a fifth digit (999.96 ns -> "1000.0"): move up a unit instead.
    std::size_t int_digits = text.find('.') == std::string::npos ? text.size() : text.find('.');
    if (text[0] == '-') --int_digits;
    if (unit < 3 && int_digits > 3) {
      v /= 1000;
      ++unit;
      continue;
    }
    return text + " " + units[unit];
  }
}

std::string ratio(double v) {
  return fixed(v, 4) + "x";
}

std::string interval(const Interval& ci) {
  return "[" + fixed(ci.lo, 4) + ", " + fixed(ci.hi, 4) + "]";
}

std::string drift(double d) {
  double pct = (d - 1) * 100;
  std::string mag = fixed(std::abs(pct), 2);
  return (pct < 0 && mag != "0.00" ? "-" : "+") + mag + "%";
}

std::string percent(double fraction, int decimals) {
  return fixed(fraction * 100, decimals) + "%";
}

std::string confidence_label(double confidence) {
  std::string p = fixed(confidence * 100, 1);
  if (p.size() > 2 && p.substr(p.size() - 2) == ".0") p.resize(p.size() - 2);
  return p + "% CI";
}

std::string short_id(const std::string& id) {
  return id.substr(0, 12);
}

std::string variant_label(const VariantProvenance& v) {
  std::string label = one_line(v.source.requested.empty() ? v.name : v.source.requested);
  if (!v.source.commit.empty()) label += " (" + short_id(v.source.commit) + ")";
  return label;
}

std::string variants_title(const Report& r, std::string (*decorate)(const std::string& label)) {
  std::vector<std::string> parts;
  for (const auto& v : r.provenance.variants)
    parts.push_back(v.name + " " + (decorate ? decorate(variant_label(v)) : variant_label(v)));
  return join(parts, " vs ");
}

std::vector<std::string> arm_columns(const Report& r) {
  std::vector<std::string> cols;
  for (const auto& row : r.shapes)
    for (const auto& a : row.arms)
      if (std::find(cols.begin(), cols.end(), a.arm) == cols.end()) cols.push_back(a.arm);
  return cols;
}

std::string arm_cell(const ArmStats* a) {
  if (!a) return "";
  if (!a->ok) return "failed";
  return duration(a->median_ns) + (a->outlier_ratio ? " (left out)" : "");
}

const ArmStats* find_arm(const ShapeRow& row, const std::string& arm) {
  for (const auto& a : row.arms)
    if (a.arm == arm) return &a;
  return nullptr;
}

std::string verdict_counts(const Summary& s) {
  std::string out;
  for (Verdict v : all_verdicts()) {
    auto it = s.verdicts.find(to_string(v));
    int n = it == s.verdicts.end() ? 0 : it->second;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + to_string(v);
  }
  return out;
}

std::string timing_line(const Report& r) {
  std::vector<std::string> timings;
  for (const auto& row : r.shapes)
    if (std::find(timings.begin(), timings.end(), row.timing) == timings.end())
      timings.push_back(row.timing);
  if (timings.empty()) timings.push_back(kTimingKernel);
  if (timings.size() == 1) return "timing: " + timings[0] + " (" + timing_meaning(timings[0]) + ")";
  std::string out = "timings: " + join(timings, ", ") + " (one row per shape and timing, " +
                    "<shape>@<timing>, aggregated per timing):";
  for (const auto& t : timings) out += " " + t + " = " + timing_meaning(t) + ";";
  out.pop_back();
  return out;
}

std::string verdict_basis(const Summary& s, const StatsOptions& opt) {
  if (s.decided_shapes == s.shapes_compared) return "";
  if (!s.decided_geomean) return "; no shape is decided, so neither is the geomean";
  const Verdict decided = classify(*s.decided_geomean_ci, std::nullopt, opt.noise_band);
  const bool vetoed =
      (decided == Verdict::faster || decided == Verdict::slower) && s.geomean_verdict != decided;
  return "; its verdict rests on the " + std::to_string(s.decided_shapes) + " decided shape" +
         (s.decided_shapes == 1 ? "" : "s") + ": " + ratio(*s.decided_geomean) + " " +
         confidence_label(opt.confidence) + " " + interval(*s.decided_geomean_ci) +
         (vetoed
              ? " " + to_string(decided) + ", which the interval over every shape does not confirm"
              : "");
}

std::vector<std::string> timing_geomeans(const Report& r) {
  std::vector<std::string> out;
  for (const TimingSummary& t : r.by_timing) {
    const Summary& s = t.summary;
    std::string line = t.timing + ": ";
    if (s.geomean)
      line += "geomean " + ratio(*s.geomean) + " (" + confidence_label(r.stats.confidence) + " " +
              interval(*s.geomean_ci) + ", " + to_string(*s.geomean_verdict) + ") over " +
              std::to_string(s.shapes_compared) + " of " + std::to_string(s.shapes_total) +
              " shapes" + verdict_basis(s, r.stats) + "; summed-time ratio " +
              ratio(*s.summed_time_ratio);
    else
      line += "no shape could be compared (every shape of this timing has a failed arm)";
    out.push_back(line);
  }
  return out;
}

const char* verdict_colour(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "\x1b[32m";  // green
    case Verdict::slower:
      return "\x1b[31m";  // red
    case Verdict::same:
      return "";  // plain: nothing to look at
    case Verdict::ambiguous:
      return "\x1b[33m";  // yellow
    case Verdict::unstable:
      return "\x1b[35m";  // magenta
    case Verdict::failed:
      return "\x1b[1;31m";  // bold red
  }
  return "";
}

std::size_t hidden_control_at(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u;
  };
  const unsigned c = b(0);
  if (c < 0x20 || c == 0x7f) return 1;
  if (c == 0xc2 && b(1) >= 0x80 && b(1) <= 0x9f) return 2;  // C1 controls, U+0080-U+009F
  if (c == 0xd8 && b(1) == 0x9c) return 2;                  // U+061C arabic letter mark
  if (c == 0xe2 && b(1) == 0x80 &&
      ((b(2) >= 0x8e && b(2) <= 0x8f) || (b(2) >= 0xaa && b(2) <= 0xae)))
    return 3;  // U+200E/F marks, U+202A-U+202E embeddings and overrides
  if (c == 0xe2 && b(1) == 0x81 && b(2) >= 0xa6 && b(2) <= 0xa9)
    return 3;  // U+2066-U+2069 isolates
  if (c == 0xef && b(1) == 0xbf && (b(2) == 0xbe || b(2) == 0xbf)) return 3;  // U+FFFE, U+FFFF
  return 0;
}

std::string one_line(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;  // CRLF is one break
    if (c == '\n' || c == '\r') {
      out += " / ";
    } else if (c == '\t') {
      out += ' ';
    } else if (const std::size_t n = hidden_control_at(s, i)) {
      out += '?';
      i += n - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

bool has_sol(const Report& r) {
  for (const auto& row : r.shapes)
    if (row.sol_ns) return true;
  return false;
}

std::string sol_pair(const ShapeRow& row) {
  if (!row.baseline_sol_fraction || !row.candidate_sol_fraction) return "-";
  return percent(*row.baseline_sol_fraction, 1) + " -> " + percent(*row.candidate_sol_fraction, 1);
}

std::string sol_legend(const Report& r) {
  return "SOL = speed-of-light time / measured time (baseline -> candidate; 100% = at the "
         "roofline bound) on " +
         join(r.sol.gpus, ", ") + ", from " + r.sol.table + " (docs/roofline.md)";
}

std::string note_text(const ReportNote& n) {
  struct Text {
    std::string operator()(const note::NoSpeedOfLight& s) const { return s.reason; }
    std::string operator()(const note::AtOneClock& c) const {
      char range[64];
      std::snprintf(range, sizeof range, c.lo_mhz == c.hi_mhz ? "%.0f MHz" : "%.0f-%.0f MHz",
                    c.lo_mhz, c.hi_mhz);
      return std::to_string(c.shapes) + " shape(s) compared at one SM clock each (" + range +
             ", the median of the shape's samples): every sample was moved along its arm's "
             "fitted time-clock line, as locked clocks would measure it; --raw-clocks compares "
             "the times as measured (docs/statistics.md)";
    }
    std::string operator()(const note::NotAtOneClock& c) const {
      return c.shape + " compared as measured, not at one clock: arm(s) " +
             join(c.unclocked_arms, ", ") + " recorded no clock readings";
    }
    std::string operator()(const note::ClockGap& g) const {
      std::string line = "the candidate's arms ran at a " + percent(std::fabs(g.mean), 1) +
                         (g.mean < 0 ? " lower" : " higher") +
                         " median SM clock than the baseline's, averaged over " +
                         std::to_string(g.shapes) + " shape(s)";
      if (g.mean < -0.01)
        line +=
            ": it likely draws more power, and at the power cap keeps less of its speedup "
            "than the equal-clock figures say";
      return line;
    }
    std::string operator()(const note::SharedHost&) const {
      return "measured with --share-host: other runs given it may have measured on other CPUs "
             "of this machine beside these arms, sharing its caches and memory bandwidth, and "
             "their load is in these times (docs/method.md#where-arms-run)";
    }
    std::string operator()(const note::FewArmDegrees& d) const {
      return std::to_string(d.shapes) + " undecided shape(s) (" + d.first_shape +
             (d.shapes > 1 ? ", ..." : "") + ") know how much whole arms differ from at most " +
             fixed(d.df, 0) +
             " degree(s) of freedom, which widens their intervals; more blocks narrow "
             "them: --rounds N, or --until-decided N for the undecided shapes only "
             "(docs/statistics.md#variation-between-arms)";
    }
    std::string operator()(const note::DriftJudged& d) const {
      return std::to_string(d.shapes) + " shape(s) (" + d.first_shape +
             (d.shapes > 1 ? ", ..." : "") +
             ") drifted beyond the band within their one block and were judged on the interval "
             "widened to the baseline's fastest and slowest arm; " +
             std::to_string(d.decided) +
             " of them kept a verdict, the rest are unstable (docs/statistics.md#verdict)";
    }
    std::string operator()(const note::ExtraBlocks& e) const {
      return std::to_string(e.blocks) + " extra block(s) ran on " + std::to_string(e.shapes) +
             " shape(s), " + std::to_string(e.arms) + " arm(s) beyond the " +
             std::to_string(e.planned) + " planned block(s) per shape, for undecided shapes and " +
             "confirmations (at most " + std::to_string(e.limit) +
             " per shape: --until-decided; docs/statistics.md#adaptive-rounds---until-decided)";
    }
    std::string operator()(const note::Withheld& w) const {
      return std::to_string(w.shapes) + " undecided shape(s) (" + w.first_shape +
             (w.shapes > 1 ? ", ..." : "") +
             ") got no more blocks although --until-decided allowed them: even after all of "
             "them their intervals were expected to stay about +-" +
             fmt::percent(w.first_expected, 2) +
             " wide, too wide to lie within the band or beyond it, so further blocks would only "
             "have cost time (docs/statistics.md#blocks-that-cannot-decide)";
    }
    std::string operator()(const note::Decisive& d) const {
      return std::to_string(d.shapes) + " shape(s) (" + d.first_shape +
             (d.shapes > 1 ? ", ..." : "") +
             ") are decided on their one candidate arm without a confirmation block: timed on "
             "the GPU, each interval lies wholly beyond " +
             fmt::fixed(d.factor, 2) + "x (or below 1/" + fmt::fixed(d.factor, 2) +
             "), a change no disturbance of one arm could fake (--decisive-factor; "
             "docs/statistics.md#confirmation)";
    }
    std::string operator()(const note::PriorConflict& c) const {
      return std::to_string(c.shapes) + " shape(s) (" + c.first_shape +
             (c.shapes > 1 ? ", ..." : "") +
             ") had arms that disagree far more than the other shapes' (an F test at " +
             fmt::fixed(100 * c.level, 1) + " %): each is judged on its own arms" +
             (c.median ? " and those of the run's other such shapes" : " alone") +
             ", and left out of the variation the other shapes borrow (--prior-conflict; "
             "docs/statistics.md#variation-between-arms)";
    }
    std::string operator()(const note::OutlierArms& o) const {
      return std::to_string(o.arms) + " arm(s) of " + std::to_string(o.shapes) + " shape(s) (" +
             o.first + " at " + fmt::ratio(o.first_ratio) + " its variant's median arm" +
             (o.arms > 1 ? ", ..." : "") + ") lay beyond " + fmt::fixed(o.sigmas, 1) +
             " robust standard deviations of their shape's arms and half the band: left out of "
             "the estimate as disturbed, shown in the per-arm table (--outlier-arms; "
             "docs/statistics.md#disturbed-arms)";
    }
    std::string operator()(const note::Unconfirmed& u) const {
      return std::to_string(u.shapes) + " shape(s) (" + u.first_shape +
             (u.shapes > 1 ? ", ..." : "") +
             ") are called faster or slower on a single candidate arm, unconfirmed: no "
             "confirmation block ran (--until-decided 0, or the Slurm launcher); the gate counts "
             "them as undecided (docs/statistics.md#confirmation)";
    }
  };
  return std::visit(Text{}, n);
}

std::string note_heading(NoteTopic t, bool sentence) {
  switch (t) {
    case NoteTopic::speed_of_light:
      return sentence ? "Speed of light not available" : "speed-of-light not available";
    case NoteTopic::clock:
      return sentence ? "Clock" : "clock";
    case NoteTopic::interval:
      return sentence ? "Interval" : "interval";
  }
  throw Error("note topic " + std::to_string(static_cast<int>(t)) + " has no heading");
}

std::string arm_clock(const ArmStats& a) {
  if (!a.median_mhz) return "-";
  char buf[64];
  if (a.clock_slope)
    std::snprintf(buf, sizeof buf, "%.0f MHz, slope %.2f", *a.median_mhz, *a.clock_slope);
  else
    std::snprintf(buf, sizeof buf, "%.0f MHz", *a.median_mhz);
  return buf;
}

std::vector<std::string> layer_header() {
  return {"precision",        "GEMMs", "baseline", "candidate", "baseline / bf16",
          "candidate / bf16", "SOL"};
}

std::vector<std::string> layer_row(const PrecisionSum& p) {
  std::string gemms = std::to_string(p.gemms);
  if (!p.missing.empty()) gemms += " (" + std::to_string(p.missing.size()) + " failed)";
  auto time = [&](const std::optional<double>& ns) {
    if (!ns) return std::string("-");
    return duration(*ns) + (p.missing.empty() ? "" : " (partial)");
  };
  auto rel = [](const std::optional<double>& v) { return v ? ratio(*v) : std::string("-"); };
  return {p.precision,
          gemms,
          time(p.baseline_ns),
          time(p.candidate_ns),
          rel(p.baseline_vs_bf16),
          rel(p.candidate_vs_bf16),
          p.sol_ns ? duration(*p.sol_ns) : "-"};
}

}  // namespace fmt
}  // namespace abh
