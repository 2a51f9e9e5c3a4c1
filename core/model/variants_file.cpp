#include "model/variants_file.hpp"

#include <set>

#include "system/error.hpp"
#include "system/json_schema.hpp"
#include "system/text.hpp"

namespace abh {

void check_variant_name(const std::string& name, const std::string& where) {
  bool ok = !name.empty() && name.size() <= 32 &&
            ((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z'));
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-');
  if (!ok)
    throw UsageError(where + ": variant name " + quote(name) +
                     " is not allowed; fix: use 1-32 characters of [A-Za-z0-9_-] starting with a "
                     "letter (it names the variant's directory and its arms)");
}

VariantsFile variants_file_from_json(const json& j, const std::string& where) {
  // The schema says what a variants file is; what it cannot say is checked below.
  check_schema(j, "variants", where);
  VariantsFile f;
  f.schema_version = j.at("schema_version").get<int>();
  f.baseline = j.at("baseline").get<std::string>();
  std::set<std::string> seen;
  const json& vs = j.at("variants");
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const json& v = vs[i];
    VariantSpec s;
    s.name = v.at("name").get<std::string>();
    const std::string at = where + ": /variants/" + std::to_string(i) + " (" + s.name + ")";
    check_variant_name(s.name, at);
    if (!seen.insert(s.name).second)
      throw UsageError(at + ": field 'name': " + quote(s.name) +
                       " names two variants; fix: give each variant a unique name");
    s.revision = v.at("revision").get<std::string>();
    if (v.contains("build"))
      for (const auto& [k, value] : v.at("build").items()) s.build[k] = value.get<std::string>();
    if (v.contains("run")) s.run = v.at("run");
    f.variants.push_back(std::move(s));
  }
  if (!seen.count(f.baseline)) {
    std::vector<std::string> names(seen.begin(), seen.end());
    throw UsageError(where + ": field 'baseline': " + quote(f.baseline) +
                     " is not one of the variants (" + join(names, ", ") +
                     "); fix: name the variant every other one is compared with");
  }
  return f;
}

VariantsFile load_variants_file(const std::filesystem::path& path) {
  try {
    return variants_file_from_json(read_json_file(path, JsonLimits{1u << 20, 16}), path.string());
  } catch (const Error& e) {
    throw UsageError(std::string("--variants: ") + e.what());
  }
}

json to_json(const VariantsFile& f) {
  json vs = json::array();
  for (const auto& v : f.variants) {
    json o{{"name", v.name}, {"revision", v.revision}};
    if (!v.build.empty()) o["build"] = v.build;
    if (!v.run.empty()) o["run"] = v.run;
    vs.push_back(std::move(o));
  }
  return json{{"schema_version", f.schema_version}, {"baseline", f.baseline}, {"variants", vs}};
}

std::vector<VariantSpec> ordered_variants(const VariantsFile& f) {
  std::vector<VariantSpec> out;
  for (const auto& v : f.variants)
    if (v.name == f.baseline) out.push_back(v);
  for (const auto& v : f.variants)
    if (v.name != f.baseline) out.push_back(v);
  return out;
}

VariantsFile two_variant_file(const std::string& baseline, const std::string& candidate) {
  VariantsFile f;
  f.baseline = "baseline";
  f.variants = {VariantSpec{"baseline", baseline, {}, json::object()},
                VariantSpec{"candidate", candidate, {}, json::object()}};
  return f;
}

bool is_two_variant_shorthand(const std::vector<VariantSpec>& ordered) {
  return ordered.size() == 2 && ordered[0].name == "baseline" && ordered[1].name == "candidate" &&
         ordered[0].build.empty() && ordered[1].build.empty() && ordered[0].run.empty() &&
         ordered[1].run.empty();
}

}  // namespace abh
