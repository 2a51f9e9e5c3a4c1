// How the lanes of a sweep are run: a small interface and a registry (`--launcher local|slurm`).
// A lane is the ordered arms that share one GPU: all arms of a shape are in one lane, so they run
// on one node and one GPU whatever the launcher. `local` runs each lane as a thread of the
// orchestrator on a GPU of this machine (sweep.hpp); `slurm` submits each lane as a Slurm batch job
// that runs `abharness lane` on the node Slurm chose (launcher_slurm.cpp, docs/scale.md).
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model/launch.hpp"
#include "model/plan.hpp"
#include "sweep.hpp"

namespace abh {

namespace slurm {
class CommandRunner;
}

// What the plan's machine is probed from.
struct MachineRequest {
  LauncherSpec launcher;
  bool cuda = false;
  std::vector<std::string> gpus;  // --gpus (local launcher only)
  std::filesystem::path run_dir;
  std::filesystem::path worker;
  std::string run_id;
};

class Launcher {
 public:
  virtual ~Launcher() = default;

  // Checks the launcher's options before anything is built (UsageError naming the flag), and fills
  // in what follows from the plugin's device (a Slurm GPU lane asks for one GPU by default).
  virtual LauncherSpec resolve(LauncherSpec spec, bool cuda) const = 0;
  // How many lanes the plan's arms are spread over.
  virtual int lanes(const LauncherSpec& spec, bool cuda, size_t gpus) const = 0;
  // The plan's machine, one entry per lane, probed where the lanes will run.
  virtual std::vector<Environment> probe(const MachineRequest& req) const = 0;
  // Places the plan's arms on CPUs (Task::cpus) from --cpus `cpus`, or leaves that to each lane on
  // its node, where the planning machine's CPU numbers mean nothing (the tasks keep none).
  virtual void place(Plan& plan, const std::string& cpus) const = 0;
  // Whether --until-decided can extend a sweep: its conditional blocks are chosen from the
  // results of earlier ones, between rounds that this process runs.
  virtual bool runs_until_decided() const = 0;
  // Refuses (UsageError) to resume when the machine (and for the local launcher the CPUs the plan
  // placed arms on) is not the plan's any more.
  virtual void check_machine(const std::filesystem::path& run_dir, const Plan& plan,
                             const std::filesystem::path& worker) const = 0;
  // Runs every planned arm whose result path is not in `done`, and returns when no lane of the run
  // is running any more.
  virtual SweepSummary run(const std::filesystem::path& run_dir, const Plan& plan,
                           const std::filesystem::path& worker, const std::set<std::string>& done,
                           const SweepOptions& opt) const = 0;
};

// The launcher registered under `name`; UsageError naming --launcher and the known names.
const Launcher& launcher_named(const std::string& name);
std::vector<std::string> launcher_names();

const Launcher& local_launcher();  // launcher_local.cpp
const Launcher& slurm_launcher();  // launcher_slurm.cpp
// The Slurm launcher over `slurm`, which runs its sbatch and squeue commands (slurm.hpp): a unit
// test's fake cluster. `slurm` must outlive it.
std::unique_ptr<Launcher> make_slurm_launcher(const slurm::CommandRunner& slurm);

}  // namespace abh
