#include "dry_check.hpp"

#include <chrono>
#include <iostream>
#include <vector>

#include "device.hpp"
#include "exit_error.hpp"
#include "model/grid.hpp"
#include "model/settings.hpp"
#include "model/worker_protocol.hpp"
#include "plugin.hpp"

namespace abh::worker {

namespace {

// The device session the problems are created in: the host's, or the GPU's for a CUDA plugin (its
// problems allocate device memory, which needs a context).
std::unique_ptr<DeviceSession> open_for(const Plugin& plugin, const std::string& gpu) {
  if (!plugin.is_cuda()) return cpu_device().open("");
  if (gpu.empty())
    throw UsageError("plugin " + plugin.name() +
                     " is a CUDA plugin: its problems can be checked on a GPU only (--gpu)");
  const Device* device = gpu_device();
  if (!device)
    throw ExitError(
        worker_protocol::kUnsupported,
        "plugin " + plugin.name() + " is a CUDA plugin but this worker was built without CUDA");
  return device->open(gpu);
}

// One shape: its problem is made, given the tactic when one is asked for, and destroyed. The
// plugin's refusal, naming the shape; empty when it took the shape.
std::string refusal_of(const Plugin& plugin, const Shape& shape, const std::string& tactic) {
  try {
    const std::unique_ptr<Problem> problem = plugin.create(shape.params);
    if (tactic != "auto" && tactic != kDefaultTactic) problem->select_tactic(tactic);
    return "";
  } catch (const PluginError& e) {
    return "shape " + shape.id + ": " + e.what();
  }
}

// Every refusal is named at once, so that one fix of the grid is enough; a few, and the count.
[[noreturn]] void refuse(const std::vector<std::string>& refusals, std::size_t shapes) {
  constexpr std::size_t kNamed = 8;
  std::string text =
      std::to_string(refusals.size()) + " of " + std::to_string(shapes) + " shapes refused: ";
  for (std::size_t i = 0; i < refusals.size() && i < kNamed; ++i)
    text += (i ? "; " : "") + refusals[i];
  if (refusals.size() > kNamed)
    text += "; and " + std::to_string(refusals.size() - kNamed) + " more";
  throw PluginError(ABH_ERR_INVALID_PARAMS, text);
}

}  // namespace

void dry_check(const DryCheckRequest& req) {
  const auto start = std::chrono::steady_clock::now();
  const Grid grid = load_grid(req.shapes);
  const Plugin plugin(req.plugin);
  const std::unique_ptr<DeviceSession> session = open_for(plugin, req.gpu);
  std::vector<std::string> refusals;
  for (const Shape& shape : grid.shapes)
    if (std::string why = refusal_of(plugin, shape, req.tactic); !why.empty())
      refusals.push_back(std::move(why));
  session->synchronize();  // an asynchronous failure of the problems' set-up surfaces here
  if (!refusals.empty()) refuse(refusals, grid.shapes.size());
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::cout << json{{"shapes", grid.shapes.size()}, {"seconds", took.count()}}.dump() << std::endl;
}

}  // namespace abh::worker
