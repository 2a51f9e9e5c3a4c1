#include "build/build.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <sstream>

#include "system/error.hpp"
#include "system/process.hpp"
#include "system/sha256.hpp"

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

// The recipe's PATH (when it sets one) decides which program runs, so it decides the toolchain too.
fs::path resolve_program(const BuildRecipe& r, const fs::path& src) {
  if (r.shell) return "/bin/sh";
  const std::string& name = r.argv.at(0);
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

std::string toolchain_id(const fs::path& program) {
  std::error_code ec;
  fs::path real = fs::canonical(program, ec);
  if (ec) throw Error("build program " + program.string() + " cannot be resolved: " + ec.message());
  return real.string() + ":" + sha256_file(real);
}

std::string tail_lines(const fs::path& file, size_t n) {
  std::ifstream in(file, std::ios::binary);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (lines.size() > n) lines.pop_front();
  }
  std::string s;
  for (const auto& l : lines) s += "  " + l + "\n";
  return s.empty() ? "  (the log is empty)\n" : s;
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

std::string describe_source(const SourceIdentity& id) {
  std::string s = id.digest;
  if (!id.requested.empty()) s += " (" + id.requested + ")";
  return s;
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

BuildOutcome build_variant_unwrapped(const BuildRecipe& recipe, const fs::path& src,
                                     const SourceIdentity& id, const fs::path& cache_root,
                                     const fs::path& variant_dir) {
  if (recipe.argv.empty()) throw Error("recipe '" + recipe.target + "' has an empty argv");
  if (recipe.shell && recipe.argv.size() != 1)
    throw Error("recipe '" + recipe.target + "': a shell recipe must have exactly one argv item");
  if (id.digest.empty())
    throw Error("cannot build " + src.string() + ": its source identity has no digest");
  const fs::path artifact_rel(recipe.artifact);
  if (artifact_rel.empty() || artifact_rel.is_absolute() || !artifact_rel.has_filename())
    throw Error("recipe '" + recipe.target + "': artifact '" + recipe.artifact +
                "' is not a relative file path");
  const std::string artifact_name = artifact_rel.filename().string();
  if (artifact_name == kBuildLog || artifact_name == kMeta)
    throw Error("recipe '" + recipe.target + "': artifact file name '" + artifact_name +
                "' is reserved by abharness; rename the plugin");

  BuildOutcome out;
  const fs::path program = resolve_program(recipe, src);
  out.toolchain_id = toolchain_id(program);
  out.recipe_sha256 = sha256_hex(canonical(to_json(recipe)));
  out.cache_key = Sha256().field(id.digest).field(out.recipe_sha256).field(out.toolchain_id).hex();
  out.log = variant_dir / kBuildLog;
  out.plugin = variant_dir / artifact_name;

  const Expected expected{out.cache_key, id.digest, out.recipe_sha256, out.toolchain_id,
                          artifact_name};
  fs::create_directories(variant_dir);
  fs::create_directories(cache_root);
  const fs::path entry = cache_root / out.cache_key;

  std::string why;
  std::string cached_sha = check_entry(entry, expected, why);
  if (!cached_sha.empty()) {
    copy_atomic(entry / artifact_name, out.plugin);
    out.plugin_sha256 = sha256_file(out.plugin);
    if (out.plugin_sha256 == cached_sha) {
      out.cache_hit = true;
      write_file_atomic(out.log, "cached build " + out.cache_key + " reused (source " + id.digest +
                                     ", recipe " + out.recipe_sha256 + ", toolchain " +
                                     out.toolchain_id + "); nothing was built\n");
      return out;
    }
    why =
        "its artifact's SHA-256 " + out.plugin_sha256 + " differs from the recorded " + cached_sha;
    std::error_code ec;
    fs::remove(out.plugin, ec);
  }
  const bool discarded = why != "absent";
  if (discarded) discard_entry(cache_root, entry);
  remove_stale_temporaries(cache_root);

  // The recipe's output goes to a scratch file first; build.log is then written whole: a header
  // that says what ran, the output, and how it ended.
  const fs::path output = variant_dir / ".build-output";
  SpawnSpec spec;
  spec.argv =
      recipe.shell ? std::vector<std::string>{"/bin/sh", "-c", recipe.argv[0]} : recipe.argv;
  spec.argv[0] = program.string();
  spec.cwd = src;
  spec.env = recipe.env;
  spec.stdout_path = output;
  spec.stderr_path = output;
  spec.timeout_s = recipe.timeout_s;

  std::ostringstream header;
  header << "abharness build of target '" << recipe.target << "'\n"
         << "source:    " << describe_source(id) << "\n"
         << "directory: " << src.string() << "\n"
         << "command:   " << command_line(spec.argv) << "\n";
  for (const auto& [k, v] : recipe.env) header << "env:       " << k << "=" << v << "\n";
  header << "toolchain: " << out.toolchain_id << "\n"
         << "recipe:    " << out.recipe_sha256 << "\n"
         << "cache key: " << out.cache_key << " (not cached";
  if (discarded) header << "; the existing entry was discarded: " << why;
  header << ")\n"
         << "timeout:   " << recipe.timeout_s << " s\n"
         << "--- output (stdout and stderr) ---\n";

  ExitStatus st = run_process(spec);
  std::string text = header.str();
  {
    std::string body = read_text_file(output, 256u << 20);
    text += body;
    if (!body.empty() && body.back() != '\n') text += "\n";
  }
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.2f", st.wall_s);
  text += "--- end of output: " + st.describe() + " after " + wall + " s ---\n";
  write_file_atomic(out.log, text);
  std::error_code ec;
  fs::remove(output, ec);

  const std::string who = "build of " + describe_source(id) + " (target '" + recipe.target +
                          "', in " + src.string() + ")";
  if (!st.ok())
    throw Error(who + " failed: " + st.describe() + " after " + wall + " s; last lines of " +
                out.log.string() + ":\n" + tail_lines(out.log, kLogTailLines + 1));

  const fs::path built = src / artifact_rel;
  if (!fs::is_regular_file(built, ec))
    throw Error(who + " succeeded but did not produce its artifact " + built.string() +
                " (field 'artifact' of " + (src / kManifestName).string() +
                "): fix the recipe or the artifact path; log: " + out.log.string());
  // A symlink in the tree could point the artifact outside the sources; we only take plugins the
  // build produced inside them.
  fs::path real = fs::canonical(built), root = fs::canonical(src);
  auto rel = real.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..")
    throw Error(who + ": artifact " + built.string() + " resolves to " + real.string() +
                ", outside the source tree");

  // Publish to the cache: a complete entry under a private temp name, synced, then one rename.
  // Concurrent builders of the same key race on that rename; the loser keeps the winner's entry.
  const fs::path tmp = cache_root / (".tmp-" + out.cache_key + "-" + random_suffix());
  fs::create_directories(tmp);
  try {
    copy_atomic(built, tmp / artifact_name);
    const std::string built_sha = sha256_file(tmp / artifact_name);
    fs::copy_file(out.log, tmp / kBuildLog);
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
    copy_atomic(built, out.plugin);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  out.plugin_sha256 = sha256_file(out.plugin);
  out.cache_hit = false;
  return out;
}

}  // namespace

BuildOutcome build_variant(const BuildRecipe& recipe, const fs::path& src, const SourceIdentity& id,
                           const fs::path& cache_root, const fs::path& variant_dir) {
  try {
    return build_variant_unwrapped(recipe, src, id, cache_root, variant_dir);
  } catch (const fs::filesystem_error& e) {
    // std::filesystem failures (a full disk, a read-only cache) reach the user as abh::Error.
    throw Error("build of target '" + recipe.target + "' in " + src.string() + ": " + e.what());
  }
}

}  // namespace abh
