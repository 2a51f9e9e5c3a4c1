#include "placement.hpp"

#include <algorithm>
#include <set>

#include "system/cpu_set.hpp"
#include "system/error.hpp"

namespace abh {
namespace {

// The GPU's local CPUs that the arms may use; all allowed ones, with a note, when sysfs does not
// say or none of them is allowed.
std::vector<int> local_cpus(const GpuInfo& gpu, const std::vector<int>& allowed,
                            const std::string& sysfs, std::string& note) {
  auto local = pci_local_cpus(gpu.pci_bus_id, sysfs);
  if (!local) {
    note = "GPU " + gpu.uuid + " (PCI " + gpu.pci_bus_id +
           "): no local_cpulist in sysfs, its arms may use any allowed CPU (" +
           format_cpu_list(allowed) + ")";
    return allowed;
  }
  std::vector<int> both;
  std::set_intersection(local->begin(), local->end(), allowed.begin(), allowed.end(),
                        std::back_inserter(both));
  if (both.empty()) {
    note = "GPU " + gpu.uuid + ": none of its local CPUs (" + format_cpu_list(*local) +
           ") is allowed, its arms use the allowed ones (" + format_cpu_list(allowed) + ")";
    return allowed;
  }
  return both;
}

}  // namespace

std::vector<LanePlacement> place_lanes(const std::vector<Environment>& machine,
                                       const std::vector<int>& allowed, const std::string& sysfs) {
  if (allowed.empty()) throw Error("no CPU is allowed for the arms");
  std::vector<LanePlacement> lanes(machine.size());
  std::vector<std::vector<int>> local(machine.size());
  std::set<int> hosts;
  for (std::size_t i = 0; i < machine.size(); ++i) {
    if (!machine[i].gpu) {
      lanes[i].cpus = {allowed.back()};
      continue;
    }
    local[i] = local_cpus(*machine[i].gpu, allowed, sysfs, lanes[i].note);
    // The highest local CPU that no other GPU's measuring thread has; shared when there is none.
    int host = local[i].back();
    for (auto it = local[i].rbegin(); it != local[i].rend(); ++it)
      if (!hosts.count(*it)) {
        host = *it;
        break;
      }
    hosts.insert(host);
    lanes[i].cpus = {host};
  }
  // The other threads of a GPU arm (the driver's, the profiler's) may use its GPU's other local
  // CPUs, except those that measure another GPU.
  for (std::size_t i = 0; i < machine.size(); ++i)
    for (int c : local[i])
      if (!hosts.count(c)) lanes[i].cpus.push_back(c);
  return lanes;
}

}  // namespace abh
