#include "model/worker_protocol.hpp"

namespace abh::worker_protocol {

std::string error_line(const std::string& message) {
  return std::string(kErrorPrefix) + message;
}

std::optional<std::string> parse_error_line(std::string_view line) {
  if (!line.starts_with(kErrorPrefix)) return std::nullopt;
  return std::string(line.substr(kErrorPrefix.size()));
}

std::vector<std::string> run_args(const std::filesystem::path& run_dir, const std::string& shape,
                                  const std::string& arm, bool warmup) {
  std::vector<std::string> args = {kRun,     kRunDirFlag, run_dir.string(), kShapeFlag, shape,
                                   kArmFlag, arm};
  if (warmup) args.push_back(kWarmupFlag);
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

}  // namespace abh::worker_protocol
