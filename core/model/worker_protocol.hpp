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

// Subcommands.
inline constexpr const char* kRun = "run";              // measure one arm of a planned run
inline constexpr const char* kProbe = "probe";          // print the environment as JSON
inline constexpr const char* kDescribe = "describe";    // print what a built plugin is, as JSON
inline constexpr const char* kTelemetry = "telemetry";  // print one GPU's telemetry now, as JSON

// Flags.
inline constexpr const char* kRunDirFlag = "--run-dir";  // run: the run directory (plan.json)
inline constexpr const char* kShapeFlag = "--shape";     // run: a shape id of the plan
inline constexpr const char* kArmFlag = "--arm";         // run: an arm name of the plan
// run: measure as usual but write no result: the unrecorded warm-up before a lane's first arm.
inline constexpr const char* kWarmupFlag = "--warmup";
inline constexpr const char* kGpuFlag = "--gpu";        // probe, telemetry: GPU index or UUID
inline constexpr const char* kPluginFlag = "--plugin";  // describe: the plugin's shared object

// Environment. The orchestrator sets the first two on every `run`; the last is a test hook.
// Its pid: the worker asks the kernel to kill it when that process dies, and exits at once when
// it was orphaned before it could ask.
inline constexpr const char* kParentPidEnv = "ABH_PARENT_PID";
// The UUID of the arm's GPU, so a worker sees only that GPU (and the plan's probe does too).
inline constexpr const char* kVisibleDevicesEnv = "CUDA_VISIBLE_DEVICES";
// Non-empty and not "0": the worker prints when its first timed iteration is enqueued.
inline constexpr const char* kStartupTraceEnv = "ABH_STARTUP_TRACE";

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
                                  const std::string& arm, bool warmup = false);
// An empty `gpu` probes the host only.
std::vector<std::string> probe_args(const std::string& gpu = "");
std::vector<std::string> describe_args(const std::filesystem::path& plugin);
std::vector<std::string> telemetry_args(const std::string& gpu);

}  // namespace abh::worker_protocol
