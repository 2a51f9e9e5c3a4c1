#include "baseline_reference.hpp"

#include <exception>

#include "stats/statistics.hpp"

namespace abh::worker {

double judged_median(const Measurement& m) {
  return m.stop && m.stop->median_ns > 0 ? m.stop->median_ns : median(m.samples_ns);
}

BaselineReference reference_from(const std::vector<const Measurement*>& baseline_arms) {
  BaselineReference ref;
  std::vector<double> medians, clocks;
  bool clocked = true;
  for (const Measurement* m : baseline_arms) {
    medians.push_back(judged_median(*m));
    if (m->clock.sample_mhz.empty())
      clocked = false;
    else
      clocks.push_back(median(m->clock.sample_mhz));
  }
  if (medians.empty()) return ref;
  ref.ns = median(medians);
  if (clocked) ref.mhz = median(clocks);
  ref.arms = static_cast<int>(medians.size());
  return ref;
}

BaselineReference baseline_reference(const Plan& plan, const Task& task, const RunDirFs& run,
                                     const std::string& timer) {
  const std::string& baseline = plan.baseline().name;
  if (task.variant == baseline) return {};
  const std::filesystem::path dir = result_rel(task).parent_path();
  std::vector<ArmResult> found;
  std::vector<std::string> unreadable;
  for (const RunDirFs::Entry& e : run.list(dir)) {
    if (e.kind != RunDirFs::Kind::file || !e.name.ends_with(".json")) continue;
    try {
      ArmResult r = read_result(run.root(), dir / e.name);
      const Invocation& inv = r.invocation;
      if (inv.run_nonce == plan.run_nonce && inv.variant == baseline && inv.shape == task.shape &&
          r.measurement.timer == timer && !r.measurement.samples_ns.empty())
        found.push_back(std::move(r));
    } catch (const std::exception& ex) {
      unreadable.push_back((dir / e.name).string() + ": " + ex.what());
    }
  }
  std::vector<const Measurement*> arms;
  for (const ArmResult& r : found) arms.push_back(&r.measurement);
  BaselineReference ref = reference_from(arms);
  ref.unreadable = std::move(unreadable);
  return ref;
}

}  // namespace abh::worker
