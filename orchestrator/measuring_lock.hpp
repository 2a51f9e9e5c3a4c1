// One run measures on a GPU, or with its measuring thread on a CPU, at a time. Two runs started
// together on one machine (two CI jobs on one runner, a user's second terminal) would otherwise
// sample side by side: on the 2-core build machine two CPU runs placed their measuring threads on
// the same CPU with their arms overlapping in time, and both reported verdicts without a word. So
// a run holds, from its dry run to its last arm, an exclusive lock per GPU (by UUID) and per
// measuring CPU its lanes use, in a directory every user of the machine shares; another run that
// needs one waits for it, saying which run holds it. Locks are flocks: the kernel releases them
// when the holder dies, even by SIGKILL, and workers do not inherit them. A launcher that places
// lanes itself (Slurm) is not locked here: its scheduler gives each job its own resources.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "system/unique_fd.hpp"

namespace abh {

// $ABH_LOCK_DIR when set (the tests give each test its own), else /tmp/abharness-locks.
std::filesystem::path measuring_lock_dir();

// The lock of the whole host: held exclusively by a run whose timings the host's load disturbs (a
// CPU lane, or host-inclusive `launch` time on a GPU), shared by a build. Two CPU runs on
// different CPUs of one machine still share its caches and memory bandwidth, and a compile beside
// a CPU measurement loads it; so neither happens beside such a run. A run planned with
// --share-host (ScheduleOptions::share_host) holds it shared instead: runs that share it, on
// other CPUs, measure side by side (and builds beside them), but none beside a run that holds it
// alone.
inline constexpr const char* kHostLock = "host";

// The names of the locks a plan's lanes need, sorted (the order they are taken in, so that two
// runs cannot each hold one the other waits for): "gpu-<uuid>" for a GPU lane, "cpu-<n>" for
// each CPU a CPU lane's arms measure on, and kHostLock for a run the host's load disturbs.
std::vector<std::string> measuring_lock_names(const Plan& plan);

class MeasuringLocks {
 public:
  // Takes every lock `plan` needs in `dir`, waiting for each held by another process (saying so
  // on stderr once, with what its holder wrote: its pid and run directory). When the directory
  // or a lock file cannot be used, says so loudly and goes on without that lock.
  MeasuringLocks(const Plan& plan, const std::filesystem::path& run_dir,
                 const std::filesystem::path& dir = measuring_lock_dir());

 private:
  std::vector<UniqueFd> held_;
};

// Held while a plugin compiles (not while a cached build is reused): waits, saying for whom, until
// no run on this machine measures what the host's load disturbs; builds do not exclude each other
// or GPU kernel timing.
class BuildingLock {
 public:
  explicit BuildingLock(const std::filesystem::path& run_dir,
                        const std::filesystem::path& dir = measuring_lock_dir());

 private:
  UniqueFd held_;
};

// The locks a run needs where its launcher runs lanes on this machine; none for a launcher that
// places lanes itself (Slurm).
std::optional<MeasuringLocks> measuring_locks_for(const Plan& plan,
                                                  const std::filesystem::path& run_dir);

}  // namespace abh
