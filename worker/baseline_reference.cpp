#include "baseline_reference.hpp"

#include <exception>

#include "stats/statistics.hpp"

namespace abh::worker {

double judged_median(const Measurement& m) {
  return m.stop && m.stop->median_ns > 0 ? m.stop->median_ns : median(m.samples_ns);
}

BaselineReference baseline_reference(const Plan& plan, const Task& task, const RunDirFs& run,
                                     const std::string& timer) {
  BaselineReference ref;
  const std::string& baseline = plan.baseline().name;
  if (task.variant == baseline) return ref;
  const std::filesystem::path dir = result_rel(task).parent_path();
  std::vector<double> medians, clocks;
  bool clocked = true;
  for (const RunDirFs::Entry& e : run.list(dir)) {
    if (e.kind != RunDirFs::Kind::file || !e.name.ends_with(".json")) continue;
    try {
      const ArmResult r = read_result(run.root(), dir / e.name);
      const Invocation& inv = r.invocation;
      if (inv.run_nonce == plan.run_nonce && inv.variant == baseline && inv.shape == task.shape &&
          r.measurement.timer == timer && !r.measurement.samples_ns.empty()) {
        medians.push_back(judged_median(r.measurement));
        const std::vector<double>& mhz = r.measurement.clock.sample_mhz;
        if (mhz.empty())
          clocked = false;
        else
          clocks.push_back(median(mhz));
      }
    } catch (const std::exception& ex) {
      ref.unreadable.push_back((dir / e.name).string() + ": " + ex.what());
    }
  }
  if (medians.empty()) return ref;
  ref.ns = median(medians);
  if (clocked) ref.mhz = median(clocks);
  ref.arms = static_cast<int>(medians.size());
  return ref;
}

}  // namespace abh::worker
