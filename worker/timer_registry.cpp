#include <map>

#include "model/timing.hpp"
#include "system/error.hpp"
#include "system/text.hpp"
#include "timer.hpp"

namespace abh::worker {
namespace {
std::map<std::string, TimerFactory>& registry() {
  static std::map<std::string, TimerFactory> r;
  return r;
}
}  // namespace

bool register_timer(const std::string& name, TimerFactory factory) {
  registry()[name] = std::move(factory);
  return true;
}

std::vector<std::string> timer_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : registry()) out.push_back(k);
  return out;
}

std::unique_ptr<Timer> make_timer(const std::string& name, const TimerContext& ctx) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    throw UsageError("timer '" + name + "' is not available in this worker build (available: " +
                     join(timer_names(), ", ") + ")");
  }
  return it->second(ctx);
}

std::string resolve_timer(const std::string& requested, bool gpu_plugin,
                          const std::string& timing) {
  if (timing != kTimingKernel) {
    if (const std::string why = timing_refusal(timing, gpu_plugin, "this"); !why.empty())
      throw UsageError(why);
    // The settings refuse another timer with these timings already (model/settings.cpp).
    const bool fits = requested == "auto" || (timing == kTimingGraph && requested == "cupti");
    if (!fits)
      throw UsageError("timer '" + requested + "' cannot time the " + timing +
                       " timing: use --timer auto");
    return timing == kTimingGraph ? "graph" : "launch";
  }
  if (requested == "auto") return gpu_plugin ? "cupti" : "steady";
  if (gpu_plugin && requested == "steady")
    throw UsageError(
        "timer 'steady' cannot time an asynchronous GPU plugin: use cupti "
        "(default) or events");
  if (!gpu_plugin && requested != "steady")
    throw UsageError("timer '" + requested +
                     "' times GPU kernels but this plugin runs "
                     "on the CPU: use steady (or auto)");
  return requested;
}

}  // namespace abh::worker
