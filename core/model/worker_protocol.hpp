// The contract between `abharness` and `abharness-worker`, in one place: how the orchestrator
// starts a worker (subcommands, flags, environment), how a worker reports a failure (one error
// line on stderr) and what its exit code means. Both binaries include this header; docs/method.md
// ("Between orchestrator and worker") describes the same protocol for people.
//
// A worker takes no measurement setting from its command line: `run` names an arm of a plan, and
// everything the arm measures is read from that plan, so a result cannot disagree with it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace abh::worker_protocol {

// The worker is two front ends over one measurement engine (docs/python.md): the abharness-worker
// executable measures C++ plugins; for a Python plugin the orchestrator starts the user's
// interpreter on the Python front end, which builds the plugin table from the user's module and
// calls the same engine. Both take the same subcommands and flags; the Python front end reads
// them, with the exit codes and the plugin ABI, from a module generated from this header at build
// time (worker/python_protocol.cpp).
//
// Subcommands.
inline constexpr const char* kRun = "run";              // measure one arm of a planned run
inline constexpr const char* kProbe = "probe";          // print the environment as JSON
inline constexpr const char* kDescribe = "describe";    // print what a built plugin is, as JSON
inline constexpr const char* kTelemetry = "telemetry";  // print one GPU's telemetry now, as JSON
// Create and destroy a built plugin's problem for each shape of a grid file, before a plan is
// written: a shape the plugin refuses is found before any arm (orchestrator/dry_run.hpp).
inline constexpr const char* kCheck = "check";
// Python front end only: print the interpreter's identity (model/interpreter.hpp) as JSON.
inline constexpr const char* kInterpreter = "interpreter";

// Flags.
inline constexpr const char* kRunDirFlag = "--run-dir";  // run: the run directory (plan.json)
inline constexpr const char* kShapeFlag = "--shape";     // run: a shape id of the plan
inline constexpr const char* kArmFlag = "--arm";         // run: an arm name of the plan
// run: measure as usual but write no result: the unrecorded warm-up before a lane's first arm.
inline constexpr const char* kWarmupFlag = "--warmup";
// run: the worker was started ahead of its turn (the plan's schedule.start_ahead). Its stdin is a
// socket from the orchestrator: it reads the plan, loads the plugin and initialises the GPU driver,
// then waits for kTurn, written once the arm before it has ended, before it creates its CUDA
// context (docs/method.md, "Starting the next arm ahead").
inline constexpr const char* kAheadFlag = "--ahead";
inline constexpr const char* kGpuFlag = "--gpu";  // probe, telemetry, check: GPU index or UUID
inline constexpr const char* kPluginFlag = "--plugin";  // describe, check: the shared object
inline constexpr const char* kShapesFlag = "--shapes";  // check: a grid file (model/grid.hpp)
inline constexpr const char* kTacticFlag = "--tactic";  // check: a tactic each problem must take

// Environment. The orchestrator sets the first two and kPlanDigestEnv on every `run`, a lane on its
// node the third; the others are hooks for benches and tests.
// Its pid: the worker asks the kernel to kill it when that process dies, and exits at once when
// it was orphaned before it could ask.
inline constexpr const char* kParentPidEnv = "ABH_PARENT_PID";
// The UUID of the arm's GPU, so a worker sees only that GPU (and the plan's probe does too).
inline constexpr const char* kVisibleDevicesEnv = "CUDA_VISIBLE_DEVICES";
// The CPUs of the arm (a list such as 4-7,12), set by `abharness lane` when the plan leaves the
// placement to each lane on its node (a launcher that places lanes): the plan names none there.
inline constexpr const char* kArmCpusEnv = "ABH_ARM_CPUS";
// The SHA-256 of plan.json as the orchestrator (or a lane) read and checked it whole before
// starting the worker: the worker holds the bytes it reads to it and then parses only its own
// arm's entries (model/arm_plan.hpp). Without it the worker reads and checks the whole plan.
inline constexpr const char* kPlanDigestEnv = "ABH_PLAN_SHA256";
// "0": local lanes of one host open their GPUs at will instead of taking turns (worker/arm.cpp).
inline constexpr const char* kDeviceOpenTurnsEnv = "ABH_DEVICE_OPEN_TURNS";
// The run directory's file whose flock is the turn to open a GPU.
inline constexpr const char* kDeviceOpenLock = ".device-open.lock";
// Non-empty and not "0": the worker prints when its first timed iteration is enqueued.
inline constexpr const char* kStartupTraceEnv = "ABH_STARTUP_TRACE";
// How a GPU worker empties the L2 before each cold sample: memset, read, memset-read or
// memset-discard (worker/l2_flush_method.hpp; unset: the default). For benches that compare the
// methods (bench/cold_clean.sh); every result says which one prepared its cache
// (measurement.cache_preparation), and provenance refuses a shape whose arms differ.
inline constexpr const char* kL2FlushEnv = "ABH_L2_FLUSH";

// The worker's files, by path relative to the directory that holds abharness and the worker: the
// executable, the engine, and the Python front end's script with the package beside it (the
// helper module users import, and the front end's own modules in abharness/_front_end/).
inline constexpr const char* kWorkerExecutable = "abharness-worker";
inline constexpr const char* kWorkerEngine = "libabharness_worker.so";
inline constexpr const char* kPythonFrontEnd = "python/abharness_front_end.py";
inline constexpr const char* kPythonPackage = "python/abharness";

// Where the worker's files are. An arm hashes the files it actually runs (its own executable, or
// the front end its interpreter was started on) and the installed rest.
struct WorkerFiles {
  std::filesystem::path executable, engine, front_end, python_package;
};
WorkerFiles worker_files(const std::filesystem::path& dir);
// The worker's identity (worker_sha256 of plans and results): a SHA-256 over each file's role
// and content digest, the package's files (every *.py below it) by their path in it. C++ and
// Python arms of a run record the same value.
std::string worker_digest(const WorkerFiles& files);

// How the Python front end is started: isolated (-I: no PYTHONPATH, no user site-packages, no
// script directory on sys.path, so the interpreter's identity is the whole of what it imports
// besides the variant) and without writing bytecode (-B: nothing is written into the variant).
inline constexpr const char* kPythonFlags[] = {"-I", "-B"};

// What the orchestrator writes on the turn socket of a worker started ahead when its turn comes.
inline constexpr std::string_view kTurn = "go\n";
// What such a worker writes on it once it has read its plan and loaded its plugin (for a Python
// plugin: imported the user's module) and waits for its turn. Before a run's first turn the sweep
// waits for the first worker of each variant to say it: a plugin that cannot load is refused
// there, before anything is measured (docs/provenance.md).
inline constexpr std::string_view kLoaded = "loaded\n";
// What such a worker of a GPU plugin writes on it once its result is written and its CUDA context
// destroyed (checked): the GPU is free, and the next arm may have its turn while this process
// exits. A worker that never says it (a CPU plugin, a failed arm) frees the GPU when its process
// ends, which the sweep then waits for.
inline constexpr std::string_view kReleased = "released\n";

// Exit codes of a worker.
enum ExitCode : int {
  kOk = 0,           // measured, verified and written (or the JSON asked for was printed)
  kUsage = 2,        // bad invocation or plan
  kRuntime = 3,      // plugin or runtime failure
  kWrongResult = 4,  // the output was wrong: no result is written, never a speedup
  kUnsupported = 5,  // the request cannot run on this machine or this worker build
};

// A worker's own account of a failure is the last stderr line that starts with this prefix.
inline constexpr std::string_view kErrorPrefix = "abharness-worker: error: ";
std::string error_line(const std::string& message);
// The message of an error line; nullopt for any other line.
std::optional<std::string> parse_error_line(std::string_view line);

// The arguments after the worker's path, one function per subcommand.
std::vector<std::string> run_args(const std::filesystem::path& run_dir, const std::string& shape,
                                  const std::string& arm, bool warmup = false, bool ahead = false);
// An empty `gpu` probes the host only.
std::vector<std::string> probe_args(const std::string& gpu = "");
std::vector<std::string> describe_args(const std::filesystem::path& plugin);
std::vector<std::string> telemetry_args(const std::string& gpu);
// `tactic` "auto" checks no tactic; an empty `gpu` creates the problems on the host.
std::vector<std::string> check_args(const std::filesystem::path& plugin,
                                    const std::filesystem::path& shapes, const std::string& tactic,
                                    const std::string& gpu);
// The whole command line of a Python arm, and of the interpreter's description.
std::vector<std::string> python_run_command(const std::string& python,
                                            const std::filesystem::path& front_end,
                                            const std::filesystem::path& run_dir,
                                            const std::string& shape, const std::string& arm,
                                            bool warmup = false, bool ahead = false);
std::vector<std::string> python_interpreter_command(const std::string& python,
                                                    const std::filesystem::path& front_end);

}  // namespace abh::worker_protocol
