#include "build/build.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>

#include "build/build_log.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

constexpr int kCacheSchemaVersion = 1;
constexpr const char* kBuildLog = "build.log";
constexpr const char* kMeta = "meta.json";
constexpr size_t kLogTailLines = 20;

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_./=:,+@%") == std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

// The program `name` names for recipe `r`: a path (relative to `src`), or found on the PATH the
// recipe sets, else on this process's. The recipe's PATH decides which program runs, so it
// decides the toolchain too.
fs::path find_recipe_program(const BuildRecipe& r, const std::string& name, const fs::path& src) {
  if (name.find('/') != std::string::npos) {
    fs::path p(name);
    return p.is_absolute() ? p : fs::absolute(src / p);
  }
  auto it = r.env.find("PATH");
  if (it == r.env.end()) return find_program(name);
  std::stringstream dirs(it->second);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  throw Error("recipe '" + r.target + "': program '" + name +
              "' was not found in the PATH the recipe sets (" + it->second + ")");
}

fs::path resolve_program(const BuildRecipe& r, const fs::path& src) {
  return r.shell ? fs::path("/bin/sh") : find_recipe_program(r, r.argv.at(0), src);
}

std::string program_id(const fs::path& program) {
  std::error_code ec;
  fs::path real = fs::canonical(program, ec);
  if (ec) throw Error("build program " + program.string() + " cannot be resolved: " + ec.message());
  return real.string() + ":" + sha256_file(real);
}

// A variable of the recipe's build: the recipe's own value, else the one it inherits from here.
std::optional<std::string> build_variable(const BuildRecipe& r, const std::string& name) {
  if (auto it = r.env.find(name); it != r.env.end()) return it->second;
  if (const char* v = std::getenv(name.c_str())) return std::string(v);
  return std::nullopt;
}

// The compilers a build tool such as CMake or make picks, named as it picks them: the variable
// when it is set (a name or a path), else the conventional program on the recipe's PATH. A recipe
// run through `sh -c "cmake ..."` names the shell as its program; the compiler it reaches is what
// decides the plugin, so it belongs to the toolchain too.
constexpr std::pair<const char*, const char*> kCompilers[] = {
    {"CXX", "c++"}, {"CC", "cc"}, {"CUDACXX", "nvcc"}};

// The variables such a build reads besides the compilers' (their values, when set, change what is
// built without changing the recipe or the sources).
constexpr const char* kBuildVariables[] = {"CUDAHOSTCXX",       "CFLAGS",
                                           "CXXFLAGS",          "CUDAFLAGS",
                                           "CPPFLAGS",          "LDFLAGS",
                                           "CMAKE_PREFIX_PATH", "CMAKE_GENERATOR",
                                           "CMAKE_BUILD_TYPE",  "CMAKE_TOOLCHAIN_FILE",
                                           "PKG_CONFIG_PATH",   "CPATH",
                                           "LIBRARY_PATH",      "CUDA_HOME"};

// The compiler `name` resolves to for this recipe: "<path>:<sha256>", or "not found".
std::string compiler_id(const BuildRecipe& r, const std::string& name) {
  try {
    return program_id(find_recipe_program(r, name, fs::current_path()));
  } catch (const Error&) {
    return "not found";
  }
}

// The toolchain of a build: the program the recipe runs, the compilers a build tool would pick
// (docs/method.md) and the build variables that are set, on one line.
std::string toolchain_id(const BuildRecipe& r, const fs::path& program) {
  std::string id = program_id(program);
  for (const auto& [var, fallback] : kCompilers) {
    const std::string name = build_variable(r, var).value_or(fallback);
    id += "; " + std::string(var) + "=" + name + " -> " + compiler_id(r, name);
  }
  for (const char* var : kBuildVariables)
    if (auto v = build_variable(r, var)) id += "; " + std::string(var) + "=" + *v;
  return id;
}

void fsync_path(const fs::path& p, bool directory) {
  int fd = ::open(p.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + p.string() + " to sync it: " + std::strerror(errno));
  int r = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (r != 0) throw Error("cannot fsync " + p.string() + ": " + std::strerror(err));
}

// Copies through a temp name and a rename, so a reader never sees half a plugin.
void copy_atomic(const fs::path& from, const fs::path& to) {
  fs::path tmp =
      to.parent_path() / ("." + to.filename().string() + ".tmp." + std::to_string(::getpid()));
  std::error_code ec;
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) throw Error("cannot copy " + from.string() + " to " + tmp.string() + ": " + ec.message());
  fsync_path(tmp, false);
  fs::rename(tmp, to, ec);
  if (ec) {
    fs::remove(tmp);
    throw Error("cannot rename " + tmp.string() + " to " + to.string() + ": " + ec.message());
  }
}

std::string random_suffix() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

struct Expected {
  std::string key, source_digest, recipe_sha256, toolchain_id, artifact_name;
};

json meta_json(const Expected& e, const std::string& artifact_sha256) {
  return json{{"schema_version", kCacheSchemaVersion}, {"cache_key", e.key},
              {"source_digest", e.source_digest},      {"recipe_sha256", e.recipe_sha256},
              {"toolchain_id", e.toolchain_id},        {"artifact", e.artifact_name},
              {"artifact_sha256", artifact_sha256}};
}

// Checks a cache entry; returns the artifact's recorded SHA-256, or an empty string and the reason
// the entry cannot be used.
std::string check_entry(const fs::path& entry, const Expected& e, std::string& why) {
  std::error_code ec;
  if (!fs::is_directory(entry, ec)) {
    why = "absent";
    return "";
  }
  json meta;
  try {
    meta = read_json_file(entry / kMeta, JsonLimits{1u << 16, 8});
    const std::string where = (entry / kMeta).string();
    if (field<int>(meta, "schema_version", where) != kCacheSchemaVersion) {
      why = "written with another cache schema";
      return "";
    }
    const std::pair<const char*, const std::string*> expect[] = {
        {"cache_key", &e.key},
        {"source_digest", &e.source_digest},
        {"recipe_sha256", &e.recipe_sha256},
        {"toolchain_id", &e.toolchain_id},
        {"artifact", &e.artifact_name}};
    for (const auto& [k, v] : expect)
      if (field<std::string>(meta, k, where) != *v) {
        why = std::string("its meta.json field '") + k + "' does not match";
        return "";
      }
    std::string sha = field<std::string>(meta, "artifact_sha256", where);
    if (!fs::is_regular_file(entry / e.artifact_name, ec)) {
      why = "its artifact " + e.artifact_name + " is missing";
      return "";
    }
    return sha;
  } catch (const Error& err) {
    why = err.what();
    return "";
  }
}

// Moves a damaged entry out of the way (a rename is atomic; removing a tree is not), then removes
// it. Another builder may have done the same already: a missing entry is fine.
void discard_entry(const fs::path& cache_root, const fs::path& entry) {
  fs::path aside = cache_root / (".discard-" + entry.filename().string() + "-" + random_suffix());
  std::error_code ec;
  fs::rename(entry, aside, ec);
  if (!ec) fs::remove_all(aside, ec);
}

// The revision as the user typed it first; the full digest is in the build log's header.
std::string describe_source(const SourceIdentity& id) {
  const std::string digest = "source digest " + id.digest.substr(0, 12);
  return id.requested.empty() ? digest : id.requested + " (" + digest + ")";
}

// Builders that crashed between creating their private directory and renaming it leave it behind;
// a day is far longer than any publish step (a copy and a rename), so older ones are debris.
void remove_stale_temporaries(const fs::path& cache_root) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(cache_root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(".tmp-", 0) != 0 && name.rfind(".discard-", 0) != 0) continue;
    std::error_code tec;
    auto t = fs::last_write_time(it->path(), tec);
    if (!tec && now - t > std::chrono::hours(24)) fs::remove_all(it->path(), tec);
  }
}

void check_recipe(const BuildRecipe& recipe, const fs::path& src, const SourceIdentity& id) {
  if (recipe.argv.empty()) throw Error("recipe '" + recipe.target + "' has an empty argv");
  if (recipe.shell && recipe.argv.size() != 1)
    throw Error("recipe '" + recipe.target + "': a shell recipe must have exactly one argv item");
  if (id.digest.empty())
    throw Error("cannot build " + src.string() + ": its source identity has no digest");
  const fs::path artifact_rel(recipe.artifact);
  if (artifact_rel.empty() || artifact_rel.is_absolute() || !artifact_rel.has_filename())
    throw Error("recipe '" + recipe.target + "': artifact " + quote(recipe.artifact) +
                " is not a relative file path");
  const std::string artifact_name = artifact_rel.filename().string();
  if (artifact_name == kBuildLog || artifact_name == kMeta)
    throw Error("recipe '" + recipe.target + "': artifact file name " + quote(artifact_name) +
                " is reserved by abharness; rename the plugin");
}

// A valid cache entry's artifact, copied into the variant directory; false when there is none
// (`why` then says why not: "absent", or the damage that makes the entry unusable).
bool reuse_cached(const fs::path& entry, const Expected& expected, const SourceIdentity& id,
                  const RunDirFs& vdir, BuildOutcome& out, std::string& why) {
  const std::string cached_sha = check_entry(entry, expected, why);
  if (cached_sha.empty()) return false;
  vdir.copy_in(entry / expected.artifact_name, expected.artifact_name);
  out.plugin_sha256 = vdir.sha256(expected.artifact_name);
  if (out.plugin_sha256 != cached_sha) {
    why =
        "its artifact's SHA-256 " + out.plugin_sha256 + " differs from the recorded " + cached_sha;
    vdir.remove(expected.artifact_name);
    return false;
  }
  out.cache_hit = true;
  vdir.write_atomic(kBuildLog, "cached build " + out.cache_key + " reused (source " + id.digest +
                                   ", recipe " + out.recipe_sha256 + ", toolchain " +
                                   out.toolchain_id + "); nothing was built\n");
  return true;
}

std::string log_header(const BuildRecipe& recipe, const SourceIdentity& id, const fs::path& src,
                       const SpawnSpec& spec, const BuildOutcome& out, const std::string& why) {
  std::ostringstream header;
  header << "abharness build of target '" << recipe.target << "'\n"
         << "source:    " << id.digest << (id.requested.empty() ? "" : " (" + id.requested + ")")
         << "\n"
         << "directory: " << src.string() << "\n"
         << "command:   " << command_line(spec.argv) << "\n";
  for (const auto& [k, v] : recipe.env) header << "env:       " << k << "=" << v << "\n";
  header << "toolchain: " << out.toolchain_id << "\n"
         << "recipe:    " << out.recipe_sha256 << "\n"
         << "cache key: " << out.cache_key << " (not cached";
  if (why != "absent") header << "; the existing entry was discarded: " << why;
  header << ")\n"
         << "timeout:   " << recipe.timeout_s << " s\n"
         << "--- output (stdout and stderr) ---\n";
  return header.str();
}

// Runs the recipe, its output streamed into build.log (bounded: build_log.hpp), and throws with
// the output's last lines when it fails; says so when the disk filled up.
void run_recipe(const BuildRecipe& recipe, const fs::path& program, const fs::path& src,
                const SourceIdentity& id, const RunDirFs& vdir, const BuildOutcome& out,
                const std::string& why) {
  SpawnSpec spec;
  spec.argv =
      recipe.shell ? std::vector<std::string>{"/bin/sh", "-c", recipe.argv[0]} : recipe.argv;
  spec.argv[0] = program.string();
  spec.cwd = src;
  spec.env = recipe.env;
  spec.timeout_s = recipe.timeout_s;
  BuildLog log(vdir.create(kBuildLog), out.log);
  log.note(log_header(recipe, id, src, spec, out, why));
  spec.on_output = [&log](std::string_view chunk) { log.output(chunk); };
  const ExitStatus st = run_process(spec);
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.2f", st.wall_s);
  log.finish("--- end of output: " + st.describe() + " after " + wall + " s ---\n");
  if (st.ok()) return;
  std::string msg = "build of " + describe_source(id) + " (target '" + recipe.target + "', in " +
                    printable(src.string()) + ") failed: " + st.describe() + " after " + wall +
                    " s";
  const std::string full = disk_full_note(log, src);
  if (!full.empty()) msg += "; " + full;
  throw Error(msg + "; last lines of its output (all of it: " + printable(out.log.string()) +
              "):\n" + log.last_lines(kLogTailLines + 1));
}

// The artifact the recipe built, inside the source tree (a symlink could point it outside).
fs::path built_artifact(const BuildRecipe& recipe, const fs::path& src, const SourceIdentity& id,
                        const BuildOutcome& out) {
  const std::string who = "build of " + describe_source(id) + " (target '" + recipe.target +
                          "', in " + src.string() + ")";
  const fs::path built = src / recipe.artifact;
  std::error_code ec;
  if (!fs::is_regular_file(built, ec))
    throw Error(who + " succeeded but did not produce its artifact " + built.string() +
                " (field 'artifact' of " + (src / kManifestName).string() +
                "): fix the recipe or the artifact path; log: " + out.log.string());
  fs::path real = fs::canonical(built), root = fs::canonical(src);
  auto rel = real.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..")
    throw Error(who + ": artifact " + built.string() + " resolves to " + real.string() +
                ", outside the source tree");
  return built;
}

// Publishes to the cache: a complete entry under a private temp name, synced, then one rename.
// Concurrent builders of the same key race on that rename; the loser keeps the winner's entry.
void publish(const fs::path& built, const fs::path& cache_root, const fs::path& entry,
             const Expected& expected, const BuildOutcome& out) {
  const fs::path tmp = cache_root / (".tmp-" + out.cache_key + "-" + random_suffix());
  fs::create_directories(tmp);
  std::error_code ec;
  try {
    copy_atomic(built, tmp / expected.artifact_name);
    const std::string built_sha = sha256_file(tmp / expected.artifact_name);
    copy_atomic(out.log, tmp / kBuildLog);
    write_json_atomic(tmp / kMeta, meta_json(expected, built_sha));
    fsync_path(tmp, true);
    if (::rename(tmp.c_str(), entry.c_str()) != 0) {
      if (errno != ENOTEMPTY && errno != EEXIST)
        throw Error("cannot store the build in the cache at " + entry.string() + ": " +
                    std::strerror(errno));
      fs::remove_all(tmp);
    } else {
      fsync_path(cache_root, true);
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

BuildOutcome build_variant_unwrapped(const BuildRecipe& recipe, const fs::path& src,
                                     const SourceIdentity& id, const fs::path& cache_root,
                                     const fs::path& variant_dir,
                                     const std::function<void()>& before_compiling) {
  check_recipe(recipe, src, id);
  const std::string artifact_name = fs::path(recipe.artifact).filename().string();
  BuildOutcome out;
  const fs::path program = resolve_program(recipe, src);
  out.toolchain_id = toolchain_id(recipe, program);
  out.recipe_sha256 = sha256_hex(canonical(to_json(recipe)));
  out.cache_key = Sha256().field(id.digest).field(out.recipe_sha256).field(out.toolchain_id).hex();
  out.log = variant_dir / kBuildLog;
  out.plugin = variant_dir / artifact_name;

  const Expected expected{out.cache_key, id.digest, out.recipe_sha256, out.toolchain_id,
                          artifact_name};
  fs::create_directories(variant_dir);
  // The variant directory is in a run directory: its files are reached without following links.
  const RunDirFs vdir(variant_dir);
  fs::create_directories(cache_root);
  const fs::path entry = cache_root / out.cache_key;

  std::string why;
  if (reuse_cached(entry, expected, id, vdir, out, why)) return out;
  if (why != "absent") discard_entry(cache_root, entry);
  remove_stale_temporaries(cache_root);

  if (before_compiling) before_compiling();
  run_recipe(recipe, program, src, id, vdir, out, why);
  const fs::path built = built_artifact(recipe, src, id, out);
  publish(built, cache_root, entry, expected, out);
  vdir.copy_in(built, artifact_name);
  out.plugin_sha256 = vdir.sha256(artifact_name);
  out.cache_hit = false;
  return out;
}

}  // namespace

std::optional<fs::path> cached_artifact(const fs::path& cache_root,
                                        const std::string& artifact_name,
                                        const std::string& sha256) {
  std::error_code ec;
  for (fs::directory_iterator it(cache_root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path artifact = it->path() / artifact_name;
    try {
      const json meta = read_json_file(it->path() / kMeta, JsonLimits{1u << 16, 8});
      if (meta.value("artifact", "") != artifact_name ||
          meta.value("artifact_sha256", "") != sha256)
        continue;
      if (fs::is_regular_file(artifact) && sha256_file(artifact) == sha256) return artifact;
    } catch (const std::exception&) {
      // A damaged or foreign entry is not the copy sought; the next may be.
    }
  }
  return std::nullopt;
}

BuildOutcome build_variant(const BuildRecipe& recipe, const fs::path& src, const SourceIdentity& id,
                           const fs::path& cache_root, const fs::path& variant_dir,
                           const std::function<void()>& before_compiling) {
  try {
    return build_variant_unwrapped(recipe, src, id, cache_root, variant_dir, before_compiling);
  } catch (const fs::filesystem_error& e) {
    // std::filesystem failures (a full disk, a read-only cache) reach the user as abh::Error.
    throw Error("build of target '" + recipe.target + "' in " + src.string() + ": " + e.what());
  }
}

}  // namespace abh
