// CSV: one row per shape, for spreadsheets and scripts. RFC 4180: CRLF line ends, and a field
// that holds a comma, a quote or a line break is quoted with its quotes doubled. Numbers are
// written in full precision (shortest round-trip form); an absent value is an empty field.
#include <array>
#include <cstdlib>
#include <string_view>

#include "report/report_render.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

// Per-arm columns, prefixed with the arm name ("A1_median_ns"); "failure" must stay last.
constexpr std::array<const char*, 13> kArmColumns = {
    "median_ns", "min_ns",       "noise",         "samples",    "tflops",      "gbps",   "tactic",
    "kernels",   "sol_fraction", "raw_median_ns", "median_mhz", "clock_slope", "failure"};

using fmt::csv_number;

}  // namespace

namespace fmt {

namespace {

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// What a spreadsheet shows of a text field: hidden characters replaced, a formula defused.
std::string neutral(const std::string& s) {
  std::string out;
  if (!s.empty() && std::string_view("=+-@\t\r").find(s[0]) != std::string_view::npos &&
      !is_number(s))
    out += '\'';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const std::size_t n = c == '\n' || c == '\r' || c == '\t' ? 0 : hidden_control_at(s, i);
    if (n) {
      out += '?';
      i += n - 1;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string csv_field(const std::string& raw) {
  const std::string s = neutral(raw);
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string csv_number(const std::optional<double>& v) {
  return v ? exact(*v) : "";
}

std::string csv_row(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    if (cells[i].find_first_of(",\"\r\n") == std::string::npos)
      out += cells[i];
    else
      out += csv_field(cells[i]);
  }
  return out + "\r\n";
}

}  // namespace fmt

std::string render_csv(const Report& r, const RenderOptions&) {
  const auto arms = fmt::arm_columns(r);
  std::vector<std::string> header = {
      "shape", "label", "verdict", "speedup", "ci_lo", "ci_hi", "drift", "baseline_ns",
      "candidate_ns", "throttled_arms", "failure",
      // Speed of light (docs/roofline.md); empty without one.
      "sol_ns", "sol_bound", "baseline_sol_fraction", "candidate_sol_fraction",
      // Comparison at one SM clock (docs/statistics.md); empty when not clock-normalized.
      "reference_mhz", "clock_gap",
      // What was timed (docs/method.md, "Three timings"); last, so earlier columns keep their
      // place.
      "timing"};
  for (const auto& a : arms)
    for (const char* col : kArmColumns) header.push_back(a + "_" + col);

  std::string out = fmt::csv_row(header);
  for (const auto& row : r.shapes) {
    std::vector<std::string> cells = {row.shape,
                                      row.label,
                                      to_string(row.verdict),
                                      csv_number(row.speedup),
                                      row.ci ? fmt::exact(row.ci->lo) : "",
                                      row.ci ? fmt::exact(row.ci->hi) : "",
                                      csv_number(row.drift),
                                      csv_number(row.baseline_ns),
                                      csv_number(row.candidate_ns),
                                      join(row.throttled_arms, ";"),
                                      row.failure,
                                      csv_number(row.sol_ns),
                                      row.sol_bound,
                                      csv_number(row.baseline_sol_fraction),
                                      csv_number(row.candidate_sol_fraction),
                                      csv_number(row.reference_mhz),
                                      csv_number(row.clock_gap),
                                      row.timing};
    for (const auto& name : arms) {
      const ArmStats* a = fmt::find_arm(row, name);
      if (!a || !a->ok) {
        cells.insert(cells.end(), kArmColumns.size() - 1, "");
        cells.push_back(a ? a->failure : "");
        continue;
      }
      cells.insert(
          cells.end(),
          {fmt::exact(a->median_ns), fmt::exact(a->min_ns), fmt::exact(a->noise),
           std::to_string(a->samples), csv_number(a->tflops), csv_number(a->gbps), a->tactic,
           join(a->kernel_names, ";"), csv_number(a->sol_fraction), fmt::exact(a->raw_median_ns),
           csv_number(a->median_mhz), csv_number(a->clock_slope), ""});
    }
    out += fmt::csv_row(cells);
  }
  return out;
}

}  // namespace abh
