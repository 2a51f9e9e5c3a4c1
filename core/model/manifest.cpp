#include "model/manifest.hpp"

#include <cmath>
#include <set>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

constexpr int kManifestSchemaVersion = 1;
const std::set<std::string> kRecipeKeys = {"argv", "artifact", "env", "shell", "timeout_s"};

void check_no_nul(const std::string& s, const std::string& where, const std::string& what) {
  if (s.find('\0') != std::string::npos)
    throw UsageError(where + ": field '" + what +
                     "' contains a NUL character, which cannot be passed to a program");
}

// Replaces each occurrence of `token` with `value`; a token the recipe uses but the harness has no
// value for is an error, never an empty substitution that would make a confusing compiler error.
void substitute(std::string& s, const std::string& token, const std::string& value,
                const std::string& where, const std::string& what, const std::string& fix) {
  size_t pos = s.find(token);
  if (pos == std::string::npos) return;
  if (value.empty())
    throw UsageError(where + ": field '" + what + "' uses " + token +
                     ", which has no value here: " + fix);
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

// Without a shell, a first item with spaces or shell operators is almost certainly a command line
// that was meant for one; running it would fail with a baffling "program not found".
void check_not_a_command_line(const std::string& argv0, const std::string& where) {
  static const std::string kShellChars = " \t\n|&;<>()$`\\\"'*?";
  if (argv0.find_first_of(kShellChars) == std::string::npos) return;
  throw UsageError(where + ": field 'argv[0]': " + quote(argv0) +
                   " looks like a shell command line, but recipes run without a shell: split it "
                   "into one argv item per argument, or set \"shell\": true and give the command "
                   "line as the only argv item");
}

void check_artifact(const std::string& artifact, const std::string& where) {
  const std::string what = where + ": field 'artifact': " + quote(artifact);
  if (artifact.empty()) throw UsageError(what + " is empty: name the built plugin file");
  check_no_nul(artifact, where, "artifact");
  fs::path p(artifact);
  if (p.is_absolute())
    throw UsageError(what + " is absolute: give the plugin's path relative to the repository root");
  for (const auto& part : p)
    if (part == "..")
      throw UsageError(what + " contains '..': the artifact must be inside the repository");
  fs::path norm = p.lexically_normal();
  if (norm.empty() || norm == "." || !norm.has_filename() || norm.filename() == ".")
    throw UsageError(what + " does not name a file: give the plugin library's relative path");
}

std::vector<std::string> plugin_names(const json& plugins) {
  std::vector<std::string> names;
  for (auto it = plugins.begin(); it != plugins.end(); ++it) names.push_back(it.key());
  return names;
}

}  // namespace

BuildRecipe load_recipe(const fs::path& src, const std::string& target,
                        const SubstitutionVars& vars) {
  const fs::path file = src / kManifestName;
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw UsageError("no " + std::string(kManifestName) + " at the root of " + src.string() +
                     ": the kernel repository must declare its build recipe there, e.g. "
                     "{\"schema_version\": 1, \"plugins\": {\"" +
                     target + "\": {\"argv\": [...], \"artifact\": \"libplugin.so\"}}}");
  json root;
  try {
    root = read_json_file(file, JsonLimits{1u << 20, 32});
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const std::string fname = printable(file.string());
  try {
    require_object(root, fname);
    schema_version(root, fname, kManifestSchemaVersion, "manifest", "set it to 1");
    const json& plugins = object_field(root, "plugins", fname);
    auto it = plugins.find(target);
    if (it == plugins.end()) {
      auto names = plugin_names(plugins);
      throw UsageError(fname + ": field 'plugins': has no target " + quote(target) + "; " +
                       (names.empty() ? std::string("it declares no targets at all")
                                      : "it declares: " + join(names, ", ")) +
                       " (pick one of those, or add '" + target + "' to the manifest)");
    }
    const std::string where = fname + ": plugins." + target;
    require_object(*it, where);
    const json& p = *it;
    for (auto k = p.begin(); k != p.end(); ++k)
      if (!kRecipeKeys.count(k.key()))
        throw UsageError(where + ": unknown field " + quote(k.key()) +
                         " (a recipe has argv, artifact, env, shell, timeout_s)");

    BuildRecipe r;
    r.target = target;
    r.shell = field_or<bool>(p, "shell", where, false);

    auto argv_it = p.find("argv");
    if (argv_it == p.end() || !argv_it->is_array() || argv_it->empty())
      throw UsageError(where + ": field 'argv': expected a non-empty array of strings");
    r.argv = string_array(p, "argv", where);
    if (!r.shell) {
      // Checked before substitution: the harness's own values may contain spaces.
      std::string raw = r.argv[0];
      for (const char* token : {"${ABHARNESS_INCLUDE}", "${CUDA_HOME}"})
        for (size_t pos; (pos = raw.find(token)) != std::string::npos;)
          raw.erase(pos, std::string(token).size());
      check_not_a_command_line(raw, where);
    }
    for (size_t i = 0; i < r.argv.size(); ++i) {
      const std::string name = "argv[" + std::to_string(i) + "]";
      check_no_nul(r.argv[i], where, name);
      substitute_all(r.argv[i], vars, where, name);
    }
    if (r.argv[0].empty())
      throw UsageError(where + ": field 'argv[0]': the program to run is an empty string");
    if (r.shell) {
      if (r.argv.size() != 1)
        throw UsageError(where +
                         ": field 'argv': with \"shell\": true, argv must be exactly one "
                         "string (the command line given to /bin/sh -c), found " +
                         std::to_string(r.argv.size()) + " items: join them into one string");
    }

    r.artifact = field<std::string>(p, "artifact", where);
    check_artifact(r.artifact, where);
    r.artifact = fs::path(r.artifact).lexically_normal().string();

    if (p.contains("env")) {
      const json& env = object_field(p, "env", where);
      for (auto e = env.begin(); e != env.end(); ++e) {
        const std::string name = "env." + e.key();
        if (e.key().empty() || e.key().find('=') != std::string::npos)
          throw UsageError(where + ": field 'env': variable name " + quote(e.key()) +
                           " is empty or contains '='");
        check_no_nul(e.key(), where, name);
        if (!e->is_string())
          throw UsageError(where + ": field '" + name + "': expected a string, found " + e->dump());
        std::string v = e->get<std::string>();
        check_no_nul(v, where, name);
        substitute_all(v, vars, where, name);
        r.env[e.key()] = std::move(v);
      }
    }

    r.timeout_s = field_or<double>(p, "timeout_s", where, r.timeout_s);
    if (!(r.timeout_s > 0) || !std::isfinite(r.timeout_s))
      throw UsageError(where + ": field 'timeout_s': " + p.at("timeout_s").dump() +
                       " is not a positive number of seconds");
    return r;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    // field<>() and friends name the file and field already; a manifest is the user's to fix.
    throw UsageError(e.what());
  }
}

json to_json(const BuildRecipe& r) {
  json env = json::object();
  for (const auto& [k, v] : r.env) env[k] = v;
  return json{{"target", r.target}, {"argv", r.argv},   {"artifact", r.artifact},
              {"env", env},         {"shell", r.shell}, {"timeout_s", r.timeout_s}};
}

}  // namespace abh
