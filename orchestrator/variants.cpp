#include "variants.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <ostream>
#include <thread>

#include "build/build.hpp"
#include "git/materialize.hpp"
#include "measuring_lock.hpp"
#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "system/data_dir.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// SHA-256 over the names and contents of the plugin headers (abharness/*), in name order.
std::string plugin_headers_digest(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (const auto& f : files) h.field(f.filename().string()).field(sha256_file(f));
  return h.hex();
}

// A progress line every `period` while a variant builds (a first build of a CUDA plugin takes
// minutes, silent otherwise), on the log stream, from a thread that stops when the build returns.
class BuildTicker {
 public:
  BuildTicker(std::ostream& log, std::string name, std::chrono::seconds period)
      : log_(log),
        name_(std::move(name)),
        start_(std::chrono::steady_clock::now()),
        thread_([this, period] { tick(period); }) {}
  ~BuildTicker() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  BuildTicker(const BuildTicker&) = delete;
  BuildTicker& operator=(const BuildTicker&) = delete;
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  void tick(std::chrono::seconds period) {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return done_; }))
      log_ << name_ << ": still building (" << static_cast<long>(elapsed_s()) << " s)\n"
           << std::flush;
  }
  std::ostream& log_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;  // last: started once every member it reads exists
};
// A Python plugin is its sources: the variant's plugin is that directory and its digest the
// tree's; the manifest says where its work runs. Nothing is imported here.
void describe_python_variant(const fs::path& src, const fs::path& run_dir, Variant& v,
                             std::ostream& log) {
  v.plugin = fs::relative(src, run_dir).generic_string();
  v.plugin_sha256 = sha256_tree(src);
  v.device = v.recipe.python->device;
  log << v.name << ": Python plugin " << v.recipe.python->module << "." << v.recipe.python->entry
      << " (" << v.device << "; sources " << v.plugin << " sha256 " << v.plugin_sha256.substr(0, 12)
      << ")\n";
}

}  // namespace

ExitStatus run_into_scratch(const std::vector<std::string>& argv, const std::string& tag,
                            const RunDirFs& scratch, const std::map<std::string, std::string>& env,
                            double timeout_s) {
  SpawnSpec spec;
  spec.env = env;
  spec.argv = argv;
  UniqueFd out = scratch.create(tag + ".out"), err = scratch.create(tag + ".err");
  spec.stdout_fd = out.get();
  spec.stderr_fd = err.get();
  spec.timeout_s = timeout_s;
  return run_process(spec);
}

json command_json(const std::vector<std::string>& argv, const std::string& what,
                  const std::string& tag, const fs::path& scratch_dir,
                  const std::map<std::string, std::string>& env) {
  fs::create_directories(scratch_dir);
  // The scratch directory is usually in a run directory: its files are created afresh and read
  // back without following links.
  const RunDirFs scratch(scratch_dir);
  const ExitStatus st = run_into_scratch(argv, tag, scratch, env, 120);
  if (!st.ok()) {
    std::string text = scratch.read(tag + ".err", 1u << 16);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    throw Error(what + " failed (" + st.describe() + "): " + printable(text));
  }
  return parse_json(scratch.read(tag + ".out", 64u << 20), "output of " + what);
}

std::string restore_advice(const fs::path& run_dir, const std::string& plugin,
                           const std::string& sha256) {
  const fs::path dir = absolute_dir(run_dir);
  const auto cached = cached_artifact(build_cache_root(dir.parent_path()),
                                      fs::path(plugin).filename().string(), sha256);
  if (!cached) return "";
  return "the build cache holds the plugin the plan hashed: restore it (" +
         shell_command({"cp", cached->string(), (dir / plugin).string()}) + ")";
}

std::string plugin_label(const Plan& plan, const Variant& v) {
  if (!v.is_python()) return "the " + v.name + " plugin " + v.plugin;
  const PythonPlugin& py = *v.recipe.python;
  return "the " + v.name + " Python plugin " + py.module + "." + py.entry + " (under " +
         plan.python->executable + ")";
}

json worker_json(const fs::path& worker, const std::vector<std::string>& args,
                 const fs::path& scratch_dir, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{worker.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string tag = args.empty() ? "worker" : args[0];
  return command_json(argv, "abharness-worker " + tag, tag, scratch_dir, env);
}

namespace {

// An installed abharness points a CMake recipe's find_package(abharness) at its own package
// (abharness_DIR), so the recipe needs neither the prefix on PATH nor a -DCMAKE_PREFIX_PATH that
// names this machine's install. A recipe that sets abharness_DIR itself keeps its own; a binary
// of the build tree has no installed package to name.
void point_at_package(BuildRecipe& recipe) {
  const fs::path& package = current_layout().package;
  std::error_code ec;
  if (!recipe.has_build() || package.empty() || recipe.env.count("abharness_DIR") ||
      !fs::exists(package / "abharnessConfig.cmake", ec))
    return;
  recipe.env["abharness_DIR"] = package.string();
}

// The recipe of the variant's target, with ${ABHARNESS_INCLUDE} and ${CUDA_HOME} substituted; a
// missing target or a bad manifest is the user's to fix: a usage error naming the variant.
BuildRecipe read_recipe(const VariantRequest& req, const fs::path& src) {
  SubstitutionVars vars;
  vars.abharness_include = plugin_include_dir().string();
  vars.build_settings = req.build;
  // Empty when there is no toolkit: a recipe that needs ${CUDA_HOME} then gets the manifest
  // loader's clear error instead of a compiler's.
  if (const char* env = std::getenv("CUDA_HOME"))
    vars.cuda_home = env;
  else if (fs::exists("/usr/local/cuda/bin/nvcc"))
    vars.cuda_home = "/usr/local/cuda";
  try {
    BuildRecipe recipe = load_recipe(src, req.target, vars);
    // The plugin headers are an input of every build: hashing them into the recipe's environment
    // puts them in the build cache key, so a plugin built against older headers is never reused.
    if (recipe.has_build())
      recipe.env["ABHARNESS_HEADERS_SHA256"] =
          plugin_headers_digest(fs::path(vars.abharness_include) / "abharness");
    point_at_package(recipe);
    return recipe;
  } catch (const Error& e) {
    throw UsageError(req.name + " (" + req.source.requested + "): " + e.what());
  }
}

// A setting's value is one argument of the build command unless the recipe runs a shell: a value
// with a space ("-O3 -march=native") reaches the compiler whole, which its error does not say.
std::string setting_with_space_note(const Variant& v) {
  if (v.recipe.shell) return "";
  std::string note;
  for (const auto& [name, value] : v.build)
    if (value.find_first_of(" \t") != std::string::npos)
      note += "\nnote: build setting " + name + " = " + quote(value) +
              " holds a space and was passed as one argument (the recipe runs no shell): give "
              "each flag its own setting and ${NAME} in the recipe's argv";
  return note;
}

// Runs the recipe (or reuses the cached build) and records the built plugin in the variant.
void build_in_run(MaterializedVariant& m, const fs::path& run_dir, const fs::path& cache_root,
                  std::ostream& log) {
  Variant& v = m.variant;
  log << v.name << ": building (log " << fs::relative(m.dir / "build.log", run_dir).string()
      << ")\n"
      << std::flush;
  BuildOutcome built;
  double build_s = 0;
  // A compile first waits for a CPU measurement on this machine; its time counts from then.
  std::optional<BuildingLock> building;
  try {
    std::optional<BuildTicker> ticker;
    built = build_variant(v.recipe, m.src, v.source, cache_root, m.dir, [&] {
      building.emplace(run_dir);
      ticker.emplace(log, v.name, std::chrono::seconds(15));
    });
    build_s = ticker ? ticker->elapsed_s() : 0;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    // A recipe that ran and failed left its log; one refused before it ran left nothing to keep.
    if (RunDirFs(m.dir).kind("build.log") == RunDirFs::Kind::absent) throw;
    throw BuildFailed("the " + v.name + " variant: " + e.what() + setting_with_space_note(v));
  }
  log << v.name << ": "
      << (built.cache_hit ? "cached build reused, nothing built"
                          : "built in " + std::to_string(static_cast<long>(build_s + 0.5)) + " s")
      << " (" << built.plugin.filename().string() << " sha256 " << built.plugin_sha256.substr(0, 12)
      << ", log " << fs::relative(built.log, run_dir).string() << ")\n";
  v.plugin = fs::relative(built.plugin, run_dir).generic_string();
  v.plugin_sha256 = built.plugin_sha256;
  v.build_cache_key = built.cache_key;
  v.toolchain_id = built.toolchain_id;
  // A Python plugin loads what its build made from its own sources: a cached build left nothing
  // there, so the artifact goes back where the build would have put it.
  if (v.recipe.python && !fs::exists(m.src / v.recipe.artifact)) {
    fs::create_directories((m.src / v.recipe.artifact).parent_path());
    fs::copy_file(built.plugin, m.src / v.recipe.artifact);
  }
}

}  // namespace

MaterializedVariant materialize_variant(const fs::path& repo, const VariantRequest& req,
                                        const fs::path& run_dir, std::ostream& log) {
  MaterializedVariant m;
  m.dir = run_dir / "variants" / req.name;
  m.src = m.dir / "src";
  // Made here, without following links, so that what follows writes inside the run directory.
  RunDirFs(run_dir).make_dirs(fs::path("variants") / req.name);
  log << req.name << ": " << req.source.requested << " = " << req.source.kind << " "
      << req.source.commit.substr(0, 12) << " (identity " << req.source.digest.substr(0, 12)
      << ")\n";
  materialize(repo, req.source, m.src);
  m.variant.name = req.name;
  m.variant.source = req.source;
  m.variant.recipe = read_recipe(req, m.src);
  m.variant.build = req.build;
  m.variant.run = req.run;
  return m;
}

Variant build_variant_in_run(MaterializedVariant m, const fs::path& run_dir,
                             const fs::path& cache_root, const fs::path& worker,
                             std::ostream& log) {
  if (m.variant.recipe.has_build()) build_in_run(m, run_dir, cache_root, log);
  Variant& v = m.variant;
  if (v.recipe.python) {
    describe_python_variant(m.src, run_dir, v, log);
    return v;
  }
  json d = worker_json(worker, worker_protocol::describe_args(run_dir / v.plugin), m.dir);
  v.device = field<std::string>(d, "device", "abharness-worker describe");
  for (auto it = d.at("libraries").begin(); it != d.at("libraries").end(); ++it)
    v.libraries[it.key()] = it->get<std::string>();
  return v;
}

}  // namespace abh
