#include "launcher.hpp"

#include <map>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

namespace {

const std::map<std::string, const Launcher*>& registry() {
  static const std::map<std::string, const Launcher*> r = {{"local", &local_launcher()},
                                                           {"slurm", &slurm_launcher()}};
  return r;
}

}  // namespace

std::vector<std::string> launcher_names() {
  std::vector<std::string> names;
  for (const auto& [name, l] : registry()) names.push_back(name);
  return names;
}

const Launcher& launcher_named(const std::string& name) {
  auto it = registry().find(name);
  if (it != registry().end()) return *it->second;
  throw UsageError("--launcher '" + name + "' is unknown: use one of " +
                   join(launcher_names(), ", "));
}

}  // namespace abh
