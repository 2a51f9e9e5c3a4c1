#include "report/variants_report.hpp"

#include "report/report_builder.hpp"
#include "report/report_json.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

// The role a variant of the plan plays in one candidate's comparison, or "" when it plays none.
std::string role_in(const Plan& plan, const std::string& variant, const std::string& candidate) {
  if (variant == plan.baseline().name) return "baseline";
  if (variant == candidate) return "candidate";
  return "";
}

}  // namespace

bool is_variants_plan(const Plan& plan) {
  if (plan.variants.size() != 2) return true;
  return plan.variants[0].name != "baseline" || plan.variants[1].name != "candidate";
}

void require_two_variant_plan(const Plan& plan, const std::string& command) {
  if (!is_variants_plan(plan)) return;
  throw UsageError(command + ": run " + plan.run_id +
                   " compares the variants of a variants file; " + command +
                   " reads runs of --baseline/--candidate only (docs/variants.md): use "
                   "`abharness report` and its report.json, which holds each candidate's report");
}

double bonferroni_confidence(double confidence, std::size_t m) {
  return m <= 1 ? confidence : 1 - (1 - confidence) / static_cast<double>(m);
}

Plan candidate_plan(const Plan& plan, const std::string& candidate) {
  Plan p = plan;
  p.variants = {plan.baseline(), plan.variant(candidate)};
  p.variants[0].name = "baseline";
  p.variants[1].name = "candidate";
  p.tasks.clear();
  for (const Task& t : plan.tasks) {
    const std::string role = role_in(plan, t.variant, candidate);
    if (role.empty()) continue;
    p.tasks.push_back(t);
    p.tasks.back().variant = role;
  }
  return p;
}

std::vector<ArmOutcome> candidate_outcomes(const Plan& plan, const std::vector<ArmOutcome>& all,
                                           const std::string& candidate) {
  std::vector<ArmOutcome> out;
  for (const ArmOutcome& o : all) {
    const std::string role = role_in(plan, o.task.variant, candidate);
    if (role.empty()) continue;
    out.push_back(o);
    out.back().task.variant = role;
  }
  return out;
}

VariantsReport build_variants_report(const Plan& plan, const std::vector<ArmOutcome>& outcomes,
                                     const StatsOptions& opt, const std::string& result_set_digest,
                                     const RooflineContext& roofline) {
  validate(opt);
  VariantsReport r;
  r.baseline = plan.baseline().name;
  for (const Variant& v : plan.variants)
    r.variants.push_back(
        {v.name, v.source.requested, v.source.commit, v.source.digest, v.build, v.run});
  r.confidence = opt.confidence;
  const std::size_t m = plan.variants.size() - 1;
  r.comparison_confidence = bonferroni_confidence(opt.confidence, m);
  StatsOptions each = opt;
  each.confidence = r.comparison_confidence;
  for (std::size_t i = 1; i < plan.variants.size(); ++i) {
    const std::string& name = plan.variants[i].name;
    r.candidates.push_back(
        {name, build_report(candidate_plan(plan, name), candidate_outcomes(plan, outcomes, name),
                            each, result_set_digest, roofline)});
  }
  return r;
}

json to_json(const VariantsReport& r) {
  json variants = json::array();
  for (const auto& v : r.variants)
    variants.push_back(json{{"name", v.name},
                            {"revision", v.revision},
                            {"commit", v.commit},
                            {"digest", v.digest},
                            {"build", v.build},
                            {"run", v.run}});
  json candidates = json::array();
  for (const auto& c : r.candidates)
    candidates.push_back(json{{"name", c.name}, {"report", to_json(c.report)}});
  return json{{"schema_version", r.schema_version},
              {"kind", "variants"},
              {"baseline", r.baseline},
              {"variants", variants},
              {"confidence", r.confidence},
              {"comparison_confidence", r.comparison_confidence},
              {"multiple_comparisons", "bonferroni"},
              {"candidates", candidates}};
}

VariantsReport variants_report_from_json(const json& j, const std::string& where) {
  VariantsReport r;
  r.schema_version = schema_version(j, where, kVariantsReportSchemaVersion, "variants report",
                                    "re-render it with the abharness that wrote it");
  r.baseline = field<std::string>(j, "baseline", where);
  const json& vs = array_field(j, "variants", where);
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const std::string at = where + ".variants[" + std::to_string(i) + "]";
    VariantEntry v;
    v.name = field<std::string>(vs[i], "name", at);
    v.revision = field<std::string>(vs[i], "revision", at);
    v.commit = field<std::string>(vs[i], "commit", at);
    v.digest = field<std::string>(vs[i], "digest", at);
    const json& build = object_field(vs[i], "build", at);
    for (auto it = build.begin(); it != build.end(); ++it) {
      if (!it->is_string()) throw Error(at + ".build: field '" + it.key() + "': expected a string");
      v.build[it.key()] = it->get<std::string>();
    }
    v.run = object_field(vs[i], "run", at);
    r.variants.push_back(std::move(v));
  }
  r.confidence = field<double>(j, "confidence", where);
  r.comparison_confidence = field<double>(j, "comparison_confidence", where);
  const json& cs = array_field(j, "candidates", where);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const std::string at = where + ".candidates[" + std::to_string(i) + "]";
    r.candidates.push_back({field<std::string>(cs[i], "name", at),
                            report_from_json(object_field(cs[i], "report", at), at + ".report")});
  }
  return r;
}

std::string render_variants_json(const VariantsReport& r, const RenderOptions&) {
  return to_json(r).dump(2) + "\n";
}

const std::vector<VariantsFormat>& variants_format_table() {
  static const std::vector<VariantsFormat> t = {{"terminal", "txt", render_variants_terminal},
                                                {"markdown", "md", render_variants_markdown},
                                                {"pr", "pr.md", render_variants_pr},
                                                {"csv", "csv", render_variants_csv},
                                                {"tidy-csv", "tidy.csv", render_variants_tidy_csv},
                                                {"json", "json", render_variants_json}};
  return t;
}

std::string render_variants(const VariantsReport& r, const std::string& format,
                            const RenderOptions& opt) {
  std::vector<std::string> names;
  for (const auto& f : variants_format_table()) {
    if (f.name == format) return f.render(r, opt);
    names.push_back(f.name);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("--print " + format + ": a run of a variants file reports as " + list +
                   " (docs/variants.md)");
}

}  // namespace abh
