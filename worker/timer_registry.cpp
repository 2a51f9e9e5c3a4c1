#include <map>

#include "model/timing.hpp"
#include "system/error.hpp"
#include "system/text.hpp"
#include "timer.hpp"

namespace abh::worker {
namespace {
std::map<std::string, TimerFactory>& timer_factories() {
  static std::map<std::string, TimerFactory> r;
  return r;
}
}  // namespace

bool register_timer(const std::string& name, TimerFactory factory) {
  timer_factories()[name] = std::move(factory);
  return true;
}

std::vector<std::string> timer_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : timer_factories()) out.push_back(k);
  return out;
}

std::unique_ptr<Timer> make_timer(const std::string& name, const TimerContext& ctx) {
  auto it = timer_factories().find(name);
  if (it == timer_factories().end()) {
    throw UsageError("timer '" + name + "' is not available in this worker build (available: " +
                     join(timer_names(), ", ") + ")");
  }
  return it->second(ctx);
}

}  // namespace abh::worker
