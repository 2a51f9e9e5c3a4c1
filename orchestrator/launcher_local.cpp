// The local launcher: each lane is a thread of the orchestrator that runs its arms on one GPU of
// this machine (or on the host, for a CPU plugin), one fresh worker process after another.
#include "arm_worker.hpp"
#include "launcher.hpp"
#include "planner.hpp"
#include "system/error.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

class LocalLauncher : public Launcher {
 public:
  LauncherSpec resolve(LauncherSpec spec, bool) const override {
    if (spec.slurm != SlurmOptions{})
      throw UsageError("--slurm-* options are for --launcher slurm; this run uses --launcher " +
                       spec.name);
    return spec;
  }

  int lanes(const LauncherSpec&, bool cuda, size_t gpus) const override {
    // A CPU plugin measures on the host: lanes side by side would disturb each other.
    return cuda ? static_cast<int>(gpus) : 1;
  }

  std::vector<Environment> probe(const MachineRequest& req) const override {
    return probe_machine(req.worker, req.cuda, req.gpus, req.run_dir / "logs" / "probe");
  }

  void place(Plan& plan, const std::string& cpus) const override { place_arms_here(plan, cpus); }

  bool runs_until_decided() const override { return true; }

  void check_machine(const fs::path& run_dir, const Plan& plan,
                     const fs::path& worker) const override {
    check_local_machine(run_dir, plan, worker);
    check_local_cpus(run_dir, plan);
  }

  SweepSummary run(const fs::path& run_dir, const Plan& plan, const fs::path& worker,
                   const std::set<std::string>& done, const SweepOptions& opt) const override {
    return run_sweep(run_dir, plan, WorkerProcesses(plan, worker), done, opt);
  }
};

}  // namespace

const Launcher& local_launcher() {
  static const LocalLauncher l;
  return l;
}

}  // namespace abh
