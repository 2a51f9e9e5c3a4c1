#include "model/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "system/error.hpp"
#include "system/json_schema.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// A NUL cannot be passed to a program. Checked here, not by a schema pattern: argv items and env
// values have no length bound, and std::regex overflows its stack on long strings.
void check_no_nul(const std::string& s, const std::string& where, const std::string& what) {
  if (s.find('\0') != std::string::npos)
    throw UsageError(where + "/" + what +
                     ": contains a NUL character, which cannot be passed to a program");
}

// Replaces each occurrence of `token` with `value`; a token the recipe uses but the harness has no
// value for is an error, never an empty substitution that would make a confusing compiler error.
void substitute(std::string& s, const std::string& token, const std::string& value,
                const std::string& where, const std::string& what, const std::string& fix) {
  size_t pos = s.find(token);
  if (pos == std::string::npos) return;
  if (value.empty())
    throw UsageError(where + "/" + what + ": uses " + token +
                     ", which has no value here; fix: " + fix);
  while (pos != std::string::npos) {
    s.replace(pos, token.size(), value);
    pos = s.find(token, pos + value.size());
  }
}

void substitute_all(std::string& s, const SubstitutionVars& vars, const std::string& where,
                    const std::string& what) {
  substitute(s, "${ABHARNESS_INCLUDE}", vars.abharness_include, where, what,
             "this abharness installation does not know where its plugin headers are");
  substitute(s, "${CUDA_HOME}", vars.cuda_home, where, what,
             "no CUDA toolkit was found; set CUDA_HOME or build a target that does not need CUDA");
}

// The build settings in effect: the target's declared defaults, with the variant's values. A
// setting the target does not declare is refused: it would change nothing in the build but the
// cache key, so a typo would measure one build twice under two names.
std::map<std::string, std::string> effective_settings(const json& p, const std::string& where,
                                                      const SubstitutionVars& vars) {
  std::map<std::string, std::string> out;
  const json declared = p.value("build_settings", json::object());
  for (const auto& [name, value] : declared.items()) out[name] = value.get<std::string>();
  for (const auto& [name, value] : vars.build_settings) {
    if (!out.count(name)) {
      std::vector<std::string> names;
      for (const auto& [n, v] : declared.items()) names.push_back(n);
      throw UsageError(
          where + ": the variant's build setting '" + name + "' (field build." + name +
          ") is not declared by this target (" +
          (names.empty() ? std::string("it declares none") : "it declares: " + join(names, ", ")) +
          "); fix: declare it with its default under \"build_settings\" of the "
          "target in abharness.json, or remove it from the variant");
    }
    out[name] = value;
  }
  return out;
}

// In the argv of a recipe run without a shell, a ${NAME} that is neither the harness's nor a
// declared setting would reach the program as it is: refused, naming it.
void check_known_tokens(const std::string& s, const std::map<std::string, std::string>& settings,
                        const std::string& where, const std::string& what) {
  for (size_t pos = s.find("${"); pos != std::string::npos; pos = s.find("${", pos + 2)) {
    const size_t end = s.find('}', pos);
    if (end == std::string::npos) return;
    const std::string name = s.substr(pos + 2, end - pos - 2);
    if (name == "ABHARNESS_INCLUDE" || name == "CUDA_HOME" || settings.count(name)) continue;
    throw UsageError(where + "/" + what + ": uses ${" + name +
                     "}, which has no value (the recipe runs without a shell); fix: declare it "
                     "under \"build_settings\" with a default, e.g. {\"" +
                     name +
                     "\": \"...\"}, and give it per variant in the variants file's "
                     "\"build\"");
  }
}

void substitute_settings(std::string& s, const std::map<std::string, std::string>& settings) {
  for (const auto& [name, value] : settings) {
    const std::string token = "${" + name + "}";
    for (size_t pos = s.find(token); pos != std::string::npos; pos = s.find(token, pos))
      s.replace(pos, token.size(), value), pos += value.size();
  }
}

// Without a shell, a first item with spaces or shell operators is almost certainly a command line
// that was meant for one; running it would fail with a baffling "program not found".
void check_not_a_command_line(const std::string& argv0, const std::string& where) {
  static const std::string kShellChars = " \t\n|&;<>()$`\\\"'*?";
  if (argv0.find_first_of(kShellChars) == std::string::npos) return;
  throw UsageError(
      where + "/argv/0: \"" + argv0 +
      "\" looks like a shell command line, but recipes run without a shell; fix: split "
      "it into one argv item per argument, or set \"shell\": true and give the "
      "command line as the only argv item");
}

// Path semantics a schema pattern cannot state: the artifact must name a file inside the
// repository.
void check_artifact(const std::string& artifact, const std::string& where) {
  const std::string what = where + "/artifact: \"" + artifact + "\"";
  fs::path p(artifact);
  if (p.is_absolute())
    throw UsageError(what +
                     " is absolute; fix: give the plugin's path relative to the repository "
                     "root");
  for (const auto& part : p)
    if (part == "..")
      throw UsageError(what + " contains '..'; fix: the artifact must be inside the repository");
  fs::path norm = p.lexically_normal();
  if (norm.empty() || norm == "." || !norm.has_filename() || norm.filename() == ".")
    throw UsageError(what + " does not name a file; fix: give the plugin library's relative path");
}

std::vector<std::string> plugin_names(const json& plugins) {
  std::vector<std::string> names;
  for (auto it = plugins.begin(); it != plugins.end(); ++it) names.push_back(it.key());
  return names;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

bool is_dotted_name(const std::string& s) {
  std::stringstream parts(s);
  int n = 0;
  for (std::string part; std::getline(parts, part, '.'); ++n)
    if (!is_identifier(part)) return false;
  return n > 0 && s.back() != '.';
}

// A Python plugin without a build step: the build-only fields would be ignored, which is never
// what their author meant.
void check_no_build_fields(const json& p, const std::string& where) {
  for (const char* k : {"artifact", "env", "shell", "build_settings"})
    if (p.contains(k))
      throw UsageError(where + ": field '" + k +
                       "' belongs to a build step, and this Python plugin has none; fix: add "
                       "'argv' (the build command) or remove '" +
                       k + "'");
}

// A recipe the schema has accepted: types and required fields hold.
BuildRecipe recipe_from_json(const json& p, const std::string& target, const std::string& where,
                             const SubstitutionVars& vars) {
  BuildRecipe r;
  r.target = target;
  if (p.contains("python")) r.python = python_plugin_from_json(p.at("python"), where + "/python");
  r.shell = p.value("shell", false);
  r.timeout_s = p.value("timeout_s", r.timeout_s);
  if (r.python && !p.contains("argv")) {
    check_no_build_fields(p, where);
    if (!vars.build_settings.empty())
      throw UsageError(where + ": the variant has build settings (field build." +
                       vars.build_settings.begin()->first +
                       "), but this Python plugin has no build step; fix: remove them");
    return r;
  }
  const std::map<std::string, std::string> settings = effective_settings(p, where, vars);
  r.argv = p.at("argv").get<std::vector<std::string>>();
  if (!r.shell) {
    // Checked before substitution: the harness's own values may contain spaces.
    std::string raw = r.argv[0];
    std::vector<std::string> tokens{"${ABHARNESS_INCLUDE}", "${CUDA_HOME}"};
    for (const auto& [name, value] : settings) tokens.push_back("${" + name + "}");
    for (const std::string& token : tokens)
      for (size_t pos; (pos = raw.find(token)) != std::string::npos;) raw.erase(pos, token.size());
    check_not_a_command_line(raw, where);
  }
  for (size_t i = 0; i < r.argv.size(); ++i) {
    const std::string name = "argv/" + std::to_string(i);
    check_no_nul(r.argv[i], where, name);
    // Once a target declares build settings, a ${NAME} in its argv is meant as one: an unknown
    // name is a typo (without settings, ${...} stays literal as it always has).
    if (!r.shell && p.contains("build_settings"))
      check_known_tokens(r.argv[i], settings, where, name);
    substitute_settings(r.argv[i], settings);
    substitute_all(r.argv[i], vars, where, name);
  }
  r.artifact = p.at("artifact").get<std::string>();
  check_artifact(r.artifact, where);
  r.artifact = fs::path(r.artifact).lexically_normal().string();
  const json env = p.value("env", json::object());  // named: items() of a temporary dangles
  for (const auto& [name, value] : env.items()) {
    std::string v = value.get<std::string>();
    check_no_nul(v, where, "env/" + name);
    substitute_settings(v, settings);
    substitute_all(v, vars, where, "env/" + name);
    r.env[name] = std::move(v);
  }
  // The settings reach a build system that reads its environment (make, CMake) as well.
  for (const auto& [name, value] : settings) r.env[name] = value;
  return r;
}

}  // namespace

namespace {

// <src>/abharness.json, read and checked against schemas/manifest.schema.json (what the schema
// cannot say is checked by recipe_from_json). Its messages, and load_recipe's, name the file as
// the repository has it ("abharness.json", after the caller's "candidate (HEAD): "), not `src`, a
// copy in a run directory that a failed start removes.
json load_manifest(const fs::path& src, const std::string& target) {
  const fs::path file = src / kManifestName;
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw UsageError("no " + std::string(kManifestName) +
                     " at the root of the repository at this revision: the kernel repository "
                     "must declare its build recipe there, e.g. "
                     "{\"schema_version\": 1, \"plugins\": {\"" +
                     target + "\": {\"argv\": [...], \"artifact\": \"libplugin.so\"}}}");
  json root;
  try {
    const JsonLimits limits{1u << 20, 32};
    root = parse_json(read_text_file(file, limits.max_bytes), kManifestName, limits);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  check_schema(root, "manifest", kManifestName);
  return root;
}

}  // namespace

std::vector<std::string> manifest_targets(const fs::path& src) {
  return plugin_names(load_manifest(src, "TARGET").at("plugins"));
}

BuildRecipe load_recipe(const fs::path& src, const std::string& target,
                        const SubstitutionVars& vars) {
  const json root = load_manifest(src, target);
  const json& plugins = root.at("plugins");
  auto it = plugins.find(target);
  if (it == plugins.end()) {
    auto names = plugin_names(plugins);
    throw UsageError(std::string(kManifestName) + ": /plugins: has no target '" + target + "'; " +
                     (names.empty() ? std::string("it declares no targets at all")
                                    : "it declares: " + join(names, ", ")) +
                     "; fix: pick one of those with --target, or add '" + target +
                     "' to the manifest");
  }
  return recipe_from_json(*it, target, std::string(kManifestName) + ": /plugins/" + target, vars);
}

PythonPlugin python_plugin_from_json(const json& j, const std::string& where) {
  static const std::set<std::string> keys = {"module", "entry", "device", "interpreter"};
  try {
    require_object(j, where);
    for (auto k = j.begin(); k != j.end(); ++k)
      if (!keys.count(k.key()))
        throw UsageError(where + ": unknown field '" + k.key() +
                         "' (a Python plugin has module, entry, device, interpreter)");
    PythonPlugin p;
    p.module = field<std::string>(j, "module", where);
    if (!is_dotted_name(p.module))
      throw UsageError(where + ": field 'module': \"" + p.module +
                       "\" is not a dotted module name: give it as Python imports it, e.g. "
                       "\"bench.matmul\" for bench/matmul.py");
    p.entry = field_or<std::string>(j, "entry", where, p.entry);
    if (!is_identifier(p.entry))
      throw UsageError(where + ": field 'entry': \"" + p.entry +
                       "\" is not a Python identifier: name the function that makes a problem");
    p.device = field_or<std::string>(j, "device", where, p.device);
    if (p.device != "cuda" && p.device != "cpu")
      throw UsageError(where + ": field 'device': \"" + p.device +
                       "\": say where run() enqueues its work, \"cuda\" (timed with CUPTI) or "
                       "\"cpu\" (timed with the host's steady clock)");
    p.interpreter = field_or<std::string>(j, "interpreter", where, "");
    check_no_nul(p.interpreter, where, "interpreter");
    return p;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
}

json to_json(const PythonPlugin& p) {
  return json{{"module", p.module},
              {"entry", p.entry},
              {"device", p.device},
              {"interpreter", p.interpreter}};
}

json to_json(const BuildRecipe& r) {
  json env = json::object();
  for (const auto& [k, v] : r.env) env[k] = v;
  json j{{"target", r.target}, {"argv", r.argv},   {"artifact", r.artifact},
         {"env", env},         {"shell", r.shell}, {"timeout_s", r.timeout_s}};
  // Only when set: a C++ recipe's JSON, and so its build cache key, stays what it was.
  if (r.python) j["python"] = to_json(*r.python);
  return j;
}

}  // namespace abh
