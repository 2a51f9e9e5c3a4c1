// The report of a run with a variants file (docs/variants.md): each candidate compared with the
// baseline, shape by shape, by the two-variant report itself (report_builder.hpp) over the
// baseline's arms and that candidate's, with a Bonferroni-adjusted confidence level so that the
// candidates' intervals hold together at the level asked for (docs/statistics.md, "Several
// candidates"). Renderers (variants_render.cpp) show a matrix of shapes x candidates and each
// candidate's summary; report.json holds every candidate's full report
// (schemas/variants-report.schema.json).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/outcome.hpp"
#include "model/plan.hpp"
#include "report/report.hpp"
#include "report/report_render.hpp"
#include "report/speed_of_light.hpp"

namespace abh {

inline constexpr int kVariantsReportSchemaVersion = 1;

struct CandidateReport {
  std::string name;  // the candidate's name in the variants file
  // The candidate against the baseline, as a two-variant report: its variants are named by their
  // roles ("baseline", "candidate"), its arms keep their names (o2.1, o3.1, o2.2).
  Report report;
};

// What a variant is, as the plan recorded it: shown in every format's title.
struct VariantEntry {
  std::string name;
  std::string revision;  // as typed
  std::string commit;    // resolved ("" for a WORKTREE variant: its digest names it)
  std::string digest;    // source identity
  std::map<std::string, std::string> build;
  json run = json::object();
};

struct VariantsReport {
  int schema_version = kVariantsReportSchemaVersion;
  std::string baseline;
  std::vector<VariantEntry> variants;       // the plan's, the baseline first
  double confidence = 0.95;                 // the family's level (--confidence)
  double comparison_confidence = 0.95;      // each comparison's: 1 - (1 - confidence) / candidates
  std::vector<CandidateReport> candidates;  // in the plan's order
};

// Whether the plan was made from a variants file (its variants are not the two of
// --baseline/--candidate): its report is a VariantsReport.
bool is_variants_plan(const Plan& plan);

// Refuses (UsageError) a variants plan for `command`, which reads two-variant runs only.
void require_two_variant_plan(const Plan& plan, const std::string& command);

// The level of each of `m` comparisons that keeps the family's at `confidence` (Bonferroni).
double bonferroni_confidence(double confidence, std::size_t m);

// The plan and outcomes of one candidate against the baseline: the baseline's and that
// candidate's variants and arms only, the variants renamed "baseline" and "candidate".
Plan candidate_plan(const Plan& plan, const std::string& candidate);
std::vector<ArmOutcome> candidate_outcomes(const Plan& plan, const std::vector<ArmOutcome>& all,
                                           const std::string& candidate);

// Every candidate's report; `opt` carries the family's confidence level.
VariantsReport build_variants_report(const Plan& plan, const std::vector<ArmOutcome>& outcomes,
                                     const StatsOptions& opt, const std::string& result_set_digest,
                                     const RooflineContext& roofline = {});

json to_json(const VariantsReport& r);
VariantsReport variants_report_from_json(const json& j, const std::string& where);

// The formats of a variants report: terminal, markdown (md), pr (pr.md), csv and json.
struct VariantsFormat {
  std::string name;
  std::string extension;
  std::string (*render)(const VariantsReport&, const RenderOptions&);
};
const std::vector<VariantsFormat>& variants_format_table();
// UsageError naming the formats a variants report has.
std::string render_variants(const VariantsReport& r, const std::string& format,
                            const RenderOptions& opt);

std::string render_variants_terminal(const VariantsReport& r, const RenderOptions& opt);
std::string render_variants_markdown(const VariantsReport& r, const RenderOptions& opt);
// Never more than kPrCommentLimit characters, starting with kPrMarker, like render_pr.
std::string render_variants_pr(const VariantsReport& r, const RenderOptions& opt);
std::string render_variants_csv(const VariantsReport& r, const RenderOptions& opt);
std::string render_variants_json(const VariantsReport& r, const RenderOptions& opt);
// Every candidate's comparison in one tidy CSV (render_tidy_csv of several comparisons).
std::string render_variants_tidy_csv(const VariantsReport& r, const RenderOptions& opt);

}  // namespace abh
