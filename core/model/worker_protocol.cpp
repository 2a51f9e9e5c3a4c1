#include "model/worker_protocol.hpp"

#include <algorithm>

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

constexpr const char* kReinstall =
    "build the abharness-worker target, or reinstall (the worker is abharness-worker, "
    "libabharness_worker.so and python/, beside abharness)";

std::vector<std::string> python_command(const std::string& python,
                                        const std::filesystem::path& front_end) {
  std::vector<std::string> argv{python};
  for (const char* flag : kPythonFlags) argv.emplace_back(flag);
  argv.push_back(front_end.string());
  return argv;
}

// Every *.py below `dir`, by its path relative to it ('/'-separated), sorted as strings: the
// Python package's files.
std::vector<std::string> python_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / "__init__.py", ec))
    throw Error("the worker's Python package " + dir.string() +
                " is missing its __init__.py: " + kReinstall);
  for (std::filesystem::recursive_directory_iterator it(dir), end; it != end; ++it)
    if (it->is_regular_file() && it->path().extension() == ".py")
      out.push_back(it->path().lexically_relative(dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> python_run_command(const std::string& python,
                                            const std::filesystem::path& front_end,
                                            const std::filesystem::path& run_dir,
                                            const std::string& shape, const std::string& arm,
                                            bool warmup, bool ahead) {
  std::vector<std::string> argv = python_command(python, front_end);
  for (auto& a : run_args(run_dir, shape, arm, warmup, ahead)) argv.push_back(std::move(a));
  return argv;
}

std::vector<std::string> python_interpreter_command(const std::string& python,
                                                    const std::filesystem::path& front_end) {
  std::vector<std::string> argv = python_command(python, front_end);
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
  return {dir / kWorkerExecutable, engine, dir / kPythonFrontEnd, dir / kPythonPackage};
}

std::string worker_digest(const WorkerFiles& f) {
  Sha256 h;
  h.field("abharness-worker-files-v2");
  for (const auto& [role, path] :
       {std::pair{"executable", &f.executable}, std::pair{"engine", &f.engine},
        std::pair{"front end", &f.front_end}}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*path, ec))
      throw Error("the worker's " + std::string(role) + " " + path->string() +
                  " is missing: " + kReinstall);
    h.field(role).field(sha256_file(*path));
  }
  for (const std::string& rel : python_files(f.python_package))
    h.field("python package").field(rel).field(sha256_file(f.python_package / rel));
  return h.hex();
}

}  // namespace abh::worker_protocol
