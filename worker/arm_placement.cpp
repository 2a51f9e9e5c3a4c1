#include "arm_placement.hpp"

#include <cstdlib>

#include "model/launch.hpp"
#include "model/worker_protocol.hpp"
#include "system/error.hpp"

namespace abh::worker {

std::string planned_gpu(const GpuInfo& planned) {
  if (!planned.uuid.empty()) return planned.uuid;
  const char* visible = std::getenv(worker_protocol::kVisibleDevicesEnv);
  if (!visible || std::string(visible).rfind("GPU-", 0) != 0)
    throw UsageError(std::string("the plan leaves the GPU to its launcher, but ") +
                     worker_protocol::kVisibleDevicesEnv +
                     " names no GPU UUID: run arms of this plan through `abharness lane`");
  return visible;
}

std::vector<int> planned_cpus(const Plan& plan, const Task& task) {
  if (!launcher_places_lanes(plan.launcher)) return task.cpus;
  const char* cpus = std::getenv(worker_protocol::kArmCpusEnv);
  if (!cpus || !*cpus)
    throw UsageError(std::string("the plan leaves the CPUs to its launcher, but ") +
                     worker_protocol::kArmCpusEnv +
                     " is not set: run arms of this plan through `abharness lane`");
  return parse_cpu_list(cpus, worker_protocol::kArmCpusEnv);
}

std::optional<FileLock> take_device_open_turn(const Plan& plan, const RunDirFs& run) {
  const char* turns = std::getenv(worker_protocol::kDeviceOpenTurnsEnv);
  if (!lanes_take_turns_to_open(plan.launcher, plan.schedule.gpus) ||
      (turns && std::string(turns) == "0"))
    return std::nullopt;
  return std::optional<FileLock>(std::in_place, run, worker_protocol::kDeviceOpenLock,
                                 FileLock::Wait::yes);
}

}  // namespace abh::worker
