#include "model/worker_protocol.hpp"

#include "system/error.hpp"
#include "system/sha256.hpp"

namespace abh::worker_protocol {

std::string error_line(const std::string& message) {
  return std::string(kErrorPrefix) + message;
}

std::optional<std::string> parse_error_line(std::string_view line) {
  if (!line.starts_with(kErrorPrefix)) return std::nullopt;
  return std::string(line.substr(kErrorPrefix.size()));
}

std::vector<std::string> run_args(const std::filesystem::path& run_dir, const std::string& shape,
                                  const std::string& arm, bool warmup, bool ahead) {
  std::vector<std::string> args = {kRun,     kRunDirFlag, run_dir.string(), kShapeFlag, shape,
                                   kArmFlag, arm};
  if (warmup) args.push_back(kWarmupFlag);
  if (ahead) args.push_back(kAheadFlag);
  return args;
}

std::vector<std::string> probe_args(const std::string& gpu) {
  if (gpu.empty()) return {kProbe};
  return {kProbe, kGpuFlag, gpu};
}

std::vector<std::string> describe_args(const std::filesystem::path& plugin) {
  return {kDescribe, kPluginFlag, plugin.string()};
}

std::vector<std::string> telemetry_args(const std::string& gpu) {
  return {kTelemetry, kGpuFlag, gpu};
}

std::vector<std::string> check_args(const std::filesystem::path& plugin,
                                    const std::filesystem::path& shapes, const std::string& tactic,
                                    const std::string& gpu) {
  std::vector<std::string> args{kCheck,          kPluginFlag, plugin.string(), kShapesFlag,
                                shapes.string(), kTacticFlag, tactic};
  if (!gpu.empty()) args.insert(args.end(), {kGpuFlag, gpu});
  return args;
}

namespace {

std::vector<std::string> python_command(const std::string& python,
                                        const std::filesystem::path& launcher) {
  std::vector<std::string> argv{python};
  for (const char* flag : kPythonFlags) argv.emplace_back(flag);
  argv.push_back(launcher.string());
  return argv;
}

}  // namespace

std::vector<std::string> python_run_command(const std::string& python,
                                            const std::filesystem::path& launcher,
                                            const std::filesystem::path& run_dir,
                                            const std::string& shape, const std::string& arm,
                                            bool ahead) {
  std::vector<std::string> argv = python_command(python, launcher);
  for (auto& a : run_args(run_dir, shape, arm, false, ahead)) argv.push_back(std::move(a));
  return argv;
}

std::vector<std::string> python_interpreter_command(const std::string& python,
                                                    const std::filesystem::path& launcher) {
  std::vector<std::string> argv = python_command(python, launcher);
  argv.emplace_back(kInterpreter);
  return argv;
}

WorkerFiles worker_files(const std::filesystem::path& dir) {
  // The engine sits beside the executable in a build tree, and in lib/ next to bin/ when installed.
  std::filesystem::path engine = dir / kWorkerEngine;
  std::error_code ec;
  if (!std::filesystem::exists(engine, ec) &&
      std::filesystem::exists(dir.parent_path() / "lib" / kWorkerEngine, ec))
    engine = dir.parent_path() / "lib" / kWorkerEngine;
  return {dir / kWorkerExecutable, engine, dir / kPythonLauncher, dir / kPythonHelper};
}

std::string worker_digest(const WorkerFiles& f) {
  Sha256 h;
  h.field("abharness-worker-files-v1");
  for (const auto& [role, path] :
       {std::pair{"executable", &f.executable}, std::pair{"engine", &f.engine},
        std::pair{"launcher", &f.launcher}, std::pair{"helper", &f.helper}}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec))
      throw Error("the worker's " + std::string(role) + " " + path->string() +
                  " is missing: build the abharness-worker target, or reinstall (the worker is "
                  "abharness-worker, libabharness_worker.so and python/, beside abharness)");
    h.field(role).field(sha256_file(*path));
  }
  return h.hex();
}

}  // namespace abh::worker_protocol
