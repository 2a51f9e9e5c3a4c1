// Where arms run (docs/method.md#where-arms-run). A CPU arm is pinned to one CPU, the same for
// every arm of the run: on a VM the same loop took 0.27-0.48 s on one vCPU and 0.47 s on the
// other, so two arms that land on different CPUs compare the CPUs. A GPU arm's measuring thread
// is pinned to a CPU local to its GPU (the PCI device's NUMA node), one per GPU where there are
// enough, its other threads kept on the GPU's other local CPUs.
#pragma once

#include <string>
#include <vector>

#include "model/environment.hpp"

namespace abh {

struct LanePlacement {
  std::vector<int> cpus;  // the first: the measuring thread's CPU
  std::string note;       // set when the choice fell back (no local CPU list for the GPU)
};

// One placement per machine entry of a plan (a lane: the host for a CPU plugin, each GPU for a
// CUDA plugin), from the CPUs the arms may use (`allowed`, sorted). A CPU lane gets the highest
// allowed CPU (CPU 0 takes more of the machine's interrupts and housekeeping). `sysfs` is where
// the GPUs' local CPU lists are read.
std::vector<LanePlacement> place_lanes(const std::vector<Environment>& machine,
                                       const std::vector<int>& allowed,
                                       const std::string& sysfs = "/sys");

}  // namespace abh
