// Where an arm runs (docs/method.md#where-arms-run): its CPUs and its GPU as the plan, or the lane
// that started the worker, names them; the turn a multi-lane plan's workers take to open their
// GPUs; and the arm's pinning, recorded for provenance.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/environment.hpp"
#include "model/plan.hpp"
#include "model/result.hpp"
#include "system/cpu_set.hpp"
#include "system/file_lock.hpp"
#include "system/run_dir_fs.hpp"

namespace abh::worker {

// The UUID of the arm's GPU. A plan whose launcher places lanes (Slurm) cannot name it: the lane
// that started this worker names it in CUDA_VISIBLE_DEVICES, once it checked that the node's GPU
// is the planned model.
std::string planned_gpu(const GpuInfo& planned);

// The CPUs of the arm: the plan's, or when the plan leaves the placement to each lane on its node
// (the Slurm launcher), the ones the lane that started this worker chose there.
std::vector<int> planned_cpus(const Plan& plan, const Task& task);

// A worker of a local multi-lane plan opens its GPU in its turn (launch.hpp): the turn is the
// flock on a file of the run directory that every lane shares, held while the returned lock
// lives. ABH_DEVICE_OPEN_TURNS=0 lets lanes open at will (bench/scaling.sh compares both).
std::optional<FileLock> take_device_open_turn(const Plan& plan, const RunDirFs& run);

// Where the arm runs (docs/method.md#where-arms-run). First the whole process goes to the plan's
// CPUs, before the plugin and the device start threads of their own (they inherit the set); once
// they have, the measuring thread alone is narrowed to the first of them. Every CPU the measuring
// thread is seen on before a sample is recorded, so provenance can check it stayed there.
class ArmPlacement {
 public:
  explicit ArmPlacement(const std::vector<int>& cpus) { placement_.cpus = cpus; }
  void pin_process() const { pin_this_thread(placement_.cpus); }
  // A worker started ahead reads its plan and loads its plugin while the arm before it measures:
  // it keeps off the CPU that arm's measuring thread is pinned to, where it has others.
  void pin_waiting() const {
    const std::vector<int>& c = placement_.cpus;
    pin_this_thread(c.size() > 1 ? std::vector<int>(c.begin() + 1, c.end()) : c);
  }
  void pin_measuring_thread() {
    pin_this_thread({placement_.cpus.front()});
    placement_.affinity = thread_affinity();
    see();
  }
  void see() { seen_.insert(current_cpu()); }
  Placement result() const {
    Placement p = placement_;
    p.seen.assign(seen_.begin(), seen_.end());
    return p;
  }

 private:
  Placement placement_;
  std::set<int> seen_;
};

}  // namespace abh::worker
