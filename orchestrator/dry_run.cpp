#include "dry_run.hpp"

#include <csignal>
#include <future>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "model/launch.hpp"
#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "system/error.hpp"
#include "system/run_dir_fs.hpp"
#include "system/text.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

constexpr const char* kScratch = "logs/check";
constexpr const char* kPassed = "passed";  // under kScratch, once a dry run has passed
// The prefix of the Python check's own account of a failure (the last such line of its stderr).
constexpr std::string_view kPythonCheckPrefix = "abharness-check: ";

// Imports the plugin's module from the variant's sources (and the abharness helper beside the
// Python front end), as an arm's front end does, and with "create" makes each shape's problem. One
// JSON line on stdout when every step passed; otherwise one line with kPythonCheckPrefix on stderr.
constexpr const char* kPythonCheck = R"PY(
import importlib, json, os, sys
src, helper, module, entry_name, mode, shapes_path, tactic = sys.argv[1:8]
sys.path[:0] = [src, helper]

# Leaves without the interpreter's teardown, which with torch and Triton imported costs a good
# part of a second (the worker's front end does the same); nothing else is buffered.
def leave(code):
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

def fail(message):
    sys.stderr.write("abharness-check: " + message + "\n")
    leave(2)

def reason(e):
    lines = str(e).strip().splitlines()
    return type(e).__name__ + (": " + lines[0] if lines else "")

try:
    mod = importlib.import_module(module)
except BaseException as e:
    fail("cannot import module %s from the variant's sources %s: %s" % (module, src, reason(e)))
root = os.path.realpath(src) + os.sep
for m in (mod, sys.modules[module.split(".")[0]]):
    where = getattr(m, "__file__", None)
    if not where or not os.path.realpath(where).startswith(root):
        fail("module %s was imported from %s, not from the variant's sources %s: an installed "
             "copy or another directory shadows it; rename the module or uninstall the copy"
             % (m.__name__, where or "a namespace package", src))
entry = getattr(mod, entry_name, None)
if not callable(entry):
    fail("module %s has no function '%s': define it, taking a shape's parameters and returning "
         "an object with run() and verify(), or name another in abharness.json (\"entry\")"
         % (module, entry_name))
made, refused = 0, []
if mode == "create":
    with open(shapes_path) as f:
        shapes = json.load(f)["shapes"]
    for shape in shapes:
        call = "%s.%s(%s)" % (module, entry_name, json.dumps(shape["params"], sort_keys=True))
        try:
            problem = entry(shape["params"])
        except BaseException as e:
            refused.append("shape %s: %s raised %s" % (shape["id"], call, reason(e)))
            continue
        missing = [m for m in ("run", "verify") if not callable(getattr(problem, m, None))]
        if missing:
            refused.append("shape %s: %s returned %s, which has no %s() method: a problem needs "
                           "run() and verify()" % (shape["id"], call, type(problem).__name__,
                                                   missing[0]))
        elif tactic not in ("auto", "default"):
            tactics = getattr(problem, "tactics", None)
            keys = list(tactics()) if callable(tactics) else ["default"]
            if tactic not in keys:
                refused.append("shape %s: --tactic %s is not a tactic of its problem (it has: %s)"
                               % (shape["id"], tactic, ", ".join(map(str, keys))))
        del problem
        made += 1
    if refused:
        more = "; and %d more" % (len(refused) - 8) if len(refused) > 8 else ""
        fail("%d of %d shapes refused: %s%s" % (len(refused), len(shapes), "; ".join(refused[:8]),
                                                 more))
print(json.dumps({"shapes": made}))
leave(0)
)PY";

// The grid's distinct parameter sets, each under the id of its first shape: a problem depends on
// its parameters only.
Grid distinct_shapes(const std::vector<Shape>& shapes) {
  Grid g;
  std::set<std::string> seen;
  for (const Shape& s : shapes)
    if (seen.insert(canonical(s.params)).second) g.shapes.push_back(Shape{s.id, "", s.params, ""});
  return g;
}

// The command's own account of its failure: the last stderr line that starts with `prefix`,
// else the last non-empty line.
std::string failure_of(const std::string& err, std::string_view prefix) {
  std::string last, own;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) own = line.substr(prefix.size());
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return printable(own.empty() ? last : own);
}

// Runs one check to completion; UsageError with its failure, `who` and the fix.
void run_check(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const RunDirFs& scratch, const std::string& tag, std::string_view prefix,
               const std::string& who) {
  // Each problem is made once here and once per arm later: a grid whose problems take longer
  // than this to make would take hours to measure.
  const ExitStatus st = run_into_scratch(argv, tag, scratch, env, 900);
  if (st.ok()) return;
  std::string why = failure_of(scratch.read(tag + ".err", 1u << 20), prefix);
  if (why.empty()) why = "it wrote nothing before it ended";
  // abharness SIGKILLs a check only at its time limit, which describe() says; any other SIGKILL
  // is most often the kernel's out-of-memory killer.
  if (st.kind == ExitStatus::Kind::signaled && st.signal == SIGKILL)
    why +=
        " (a SIGKILL that abharness did not send is most often the kernel's out-of-memory "
        "killer: a shape of the grid may need more memory than this machine has; `dmesg` "
        "names what it killed)";
  // The check process's own status, named as such: abharness itself exits 2 (usage).
  throw UsageError(who + " fails its dry run before any arm (its check process: " + st.describe() +
                   "): " + why +
                   "; fix the grid, the options or the plugin and run again (nothing was "
                   "measured)");
}

// The C++ plugin's problems, made by `abharness-worker check` on its device; what to log.
std::string check_native(const Plan& plan, const Variant& v, const fs::path& run_dir,
                         const fs::path& worker, const RunDirFs& scratch,
                         const std::string& shapes) {
  std::map<std::string, std::string> env;
  std::string gpu;
  if (v.device == "cuda") {
    if (plan.machine.empty() || !plan.machine.front().gpu ||
        plan.machine.front().gpu->uuid.empty()) {
      return v.name + ": the CUDA plugin's problems are not checked here: its GPUs are on the " +
             plan.launcher.name + " lanes' nodes\n";
    }
    gpu = plan.machine.front().gpu->uuid;
    env[worker_protocol::kVisibleDevicesEnv] = gpu;
  }
  std::vector<std::string> argv{worker.string()};
  for (auto& a : worker_protocol::check_args(run_dir / v.plugin, scratch.root() / shapes,
                                             variant_tactic(v, plan.settings.tactic), gpu))
    argv.push_back(std::move(a));
  run_check(argv, env, scratch, v.name, worker_protocol::kErrorPrefix, plugin_label(plan, v));
  return v.name + ": dry run passed: the plugin made the problem of each distinct shape" +
         (gpu.empty() ? "" : " on GPU " + gpu) + ", nothing measured\n";
}

// Whether the sweep's first workers, started ahead here, check what a GPU Python plugin's dry run
// would: they import its module before the first turn, and the sweep waits for the first one of
// each variant to have done so (sweep.cpp, await_first_loads). Then that import is not done twice
// at once: on the H200 the workers had loaded 6.6 s after the start, while the two check
// interpreters importing torch beside them passed at 8.0 s (docs/measurements.md §43). A launcher
// that places lanes on other nodes starts them after the dry run, and every variant must be among
// the first 1 + N steps.
bool first_workers_check_imports(const Plan& plan) {
  const int ahead = plan.schedule.start_ahead;
  return ahead > 0 && !launcher_places_lanes(plan.launcher) &&
         plan.variants.size() <= static_cast<size_t>(ahead) + 1;
}

// The Python plugin's module, imported by its interpreter; a CPU plugin's problems made too.
// What to log.
std::string check_python(const Plan& plan, const Variant& v, const fs::path& run_dir,
                         const fs::path& worker, const RunDirFs& scratch,
                         const std::string& shapes) {
  const PythonPlugin& py = *v.recipe.python;
  if (py.device != "cpu" && first_workers_check_imports(plan))
    return v.name + ": module " + py.module +
           " is imported by the first workers, before the first turn (a CUDA plugin's problems "
           "are made by its arms, on their stream), nothing measured\n";
  std::vector<std::string> argv{plan.python->executable};
  for (const char* flag : worker_protocol::kPythonFlags) argv.emplace_back(flag);
  argv.insert(argv.end(),
              {"-c", kPythonCheck, (run_dir / v.plugin).string(),
               python_front_end(worker).parent_path().string(), py.module, py.entry,
               py.device == "cpu" ? "create" : "import", (scratch.root() / shapes).string(),
               variant_tactic(v, plan.settings.tactic)});
  run_check(argv, {}, scratch, v.name, kPythonCheckPrefix, plugin_label(plan, v));
  return v.name + ": dry run passed: module " + py.module + " imports" +
         (py.device == "cpu"
              ? " and made the problem of each distinct shape"
              : " (a CUDA plugin's problems are made by its arms, on their stream)") +
         ", nothing measured\n";
}

// The plan's timer must be able to time the variant's device.
void check_timer(const MeasureSettings& s, const Variant& v) {
  try {
    resolve_timer(s.timer, v.device == "cuda");
  } catch (const UsageError& e) {
    throw UsageError("--timer " + s.timer + ": the " + v.name + " plugin runs on the " +
                     (v.device == "cuda" ? "GPU" : "CPU") + ": " + e.what());
  }
}

}  // namespace

void dry_run_plugins(const Plan& plan, const fs::path& run_dir, const fs::path& worker,
                     std::ostream& log) {
  for (const Variant& v : plan.variants) check_timer(plan.settings, v);
  RunDirFs(run_dir).make_dirs(kScratch);
  const RunDirFs scratch(run_dir / kScratch);
  scratch.write_json_atomic("shapes.json", to_json(distinct_shapes(plan.shapes)));
  // The variants' checks run side by side: each is a process of its own (a Python one spends
  // seconds importing its framework: 7.4 and 4.4 s one after the other for the two torch variants
  // of the microsecond grid on the H200, docs/measurements.md), and none measures anything.
  // Every check ends before the first failure, in the variants' order, is reported.
  std::vector<std::future<std::string>> checks;
  for (const Variant& v : plan.variants) {
    // A variant with run settings makes its problems from the shapes as its arms see them.
    std::string shapes = "shapes.json";
    if (!v.run.empty()) {
      shapes = "shapes." + v.name + ".json";
      std::vector<Shape> merged;
      for (const Shape& s : plan.shapes) merged.push_back(arm_shape(s, v));
      scratch.write_json_atomic(shapes, to_json(distinct_shapes(merged)));
    }
    checks.push_back(
        std::async(std::launch::async, [&plan, &v, &run_dir, &worker, &scratch, shapes] {
          return v.is_python() ? check_python(plan, v, run_dir, worker, scratch, shapes)
                               : check_native(plan, v, run_dir, worker, scratch, shapes);
        }));
  }
  for (auto& c : checks) c.wait();
  for (auto& c : checks) log << c.get();
}

DryRunGate::DryRunGate(const Plan& plan, fs::path run_dir, fs::path worker,
                       std::function<void()> on_pass)
    : run_dir_(std::move(run_dir)), on_pass_(std::move(on_pass)) {
  if (RunDirFs(run_dir_).kind(fs::path(kScratch) / kPassed) == RunDirFs::Kind::file) return;
  running_ = std::async(std::launch::async, [&plan, this, worker = std::move(worker)] {
    dry_run_plugins(plan, run_dir_, worker, std::cerr);
  });
}

DryRunGate::~DryRunGate() {
  if (running_.valid()) running_.wait();  // its threads use the plan and the run directory
}

void DryRunGate::wait() {
  std::lock_guard<std::mutex> g(m_);
  if (!done_) {
    done_ = true;
    try {
      if (running_.valid()) {
        running_.get();
        RunDirFs(run_dir_).write_atomic(fs::path(kScratch) / kPassed, "");
      }
      if (on_pass_) on_pass_();
    } catch (...) {
      error_ = std::current_exception();
    }
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace abh
