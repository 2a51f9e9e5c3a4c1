#include "report/run_headline.hpp"

#include "report/report_json.hpp"
#include "report/report_render.hpp"

namespace abh {

RunHeadline run_headline(const Report& report, const std::string& run_dir) {
  RunHeadline h;
  const Provenance& p = report.provenance;
  h.run_id = p.run_id;
  h.run_dir = run_dir;
  h.created_at = p.created_at;
  for (const auto& v : p.variants)
    (v.name == "baseline" ? h.baseline : h.candidate) = fmt::variant_label(v);
  h.shapes = static_cast<int>(report.shapes.size());
  h.geomean = report.summary.geomean;
  h.geomean_ci = report.summary.geomean_ci;
  h.geomean_verdict = report.summary.geomean_verdict;
  return h;
}

std::string machine_label(const Environment& m, bool with_uuid) {
  std::string s = m.hostname + ": ";
  if (m.gpu)
    s += with_uuid ? m.gpu->name + " " + m.gpu->uuid : m.gpu->name;
  else
    s += m.cpu_model;
  if (!m.driver_version.empty()) s += ", driver " + m.driver_version;
  return s;
}

void put_headline(json& j, const RunHeadline& h) {
  j["run_id"] = h.run_id;
  j["run_dir"] = h.run_dir;
  j["created_at"] = h.created_at;
  j["baseline"] = h.baseline;
  j["candidate"] = h.candidate;
  j["machines"] = h.machines;
  j["shapes"] = h.shapes;
  j["geomean"] = opt_json(h.geomean);
  j["geomean_ci"] = opt_json(h.geomean_ci);
  j["geomean_verdict"] = h.geomean_verdict ? json(to_string(*h.geomean_verdict)) : json();
}

void read_headline(const json& j, const std::string& w, RunHeadline& h) {
  h.run_id = field<std::string>(j, "run_id", w);
  h.run_dir = field<std::string>(j, "run_dir", w);
  h.created_at = field<std::string>(j, "created_at", w);
  h.baseline = field<std::string>(j, "baseline", w);
  h.candidate = field<std::string>(j, "candidate", w);
  h.machines = string_array(j, "machines", w);
  h.shapes = field<int>(j, "shapes", w);
  h.geomean = opt_number(j, "geomean", w);
  h.geomean_ci = opt_interval(j, "geomean_ci", w);
  if (j.contains("geomean_verdict") && !j.at("geomean_verdict").is_null())
    h.geomean_verdict = verdict_from_string(field<std::string>(j, "geomean_verdict", w));
}

}  // namespace abh
