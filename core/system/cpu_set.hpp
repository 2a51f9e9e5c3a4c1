// CPU sets: the kernel's list syntax ("0-3,8"), this thread's affinity, pinning, and the CPUs
// local to a PCI device. Arms are placed on CPUs the plan chooses (docs/method.md): on a VM the
// same loop took 0.27-0.48 s on one vCPU and 0.47 s on the other, so an arm that lands on another
// CPU than its partner measures the CPU, not the change.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace abh {

// Parses a CPU list as sysfs and taskset write it ("0-3,8,10-11"); sorted, without duplicates.
// Throws UsageError naming `what` on anything else.
std::vector<int> parse_cpu_list(const std::string& text, const std::string& what);
// The list syntax of sorted CPUs, ranges folded: {0, 1, 2, 5} -> "0-2,5".
std::string format_cpu_list(const std::vector<int>& cpus);

// The CPUs this thread may run on (sched_getaffinity), sorted.
std::vector<int> thread_affinity();
// Restricts this thread (and the threads it creates afterwards) to `cpus`. Throws Error naming
// the CPUs and the fix when the kernel refuses (a CPU that is offline or outside the cgroup).
void pin_this_thread(const std::vector<int>& cpus);
// The CPU this thread runs on right now.
int current_cpu();

// The CPUs local to a PCI device (its NUMA node), from /sys/bus/pci/devices/<id>/local_cpulist;
// absent when the file does not exist or cannot be read. `pci_bus_id` as CUDA or NVML print it
// ("00000000:1B:00.0" or "0000:1b:00.0"); `sysfs` is the root to read from (tests give another).
std::optional<std::vector<int>> pci_local_cpus(const std::string& pci_bus_id,
                                               const std::string& sysfs = "/sys");

}  // namespace abh
