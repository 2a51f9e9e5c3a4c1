#include "provenance/repair_hints.hpp"

#include <algorithm>
#include <set>

namespace abh {

std::vector<std::string> repair_hints(const Validation& v, const std::string& run_dir) {
  std::set<std::string> bad_results, other_plan;
  bool plan_changed = false, plugin_changed = false, unrequired = false;
  for (const ProvenanceProblem& p : v.problems) {
    if (p.rule == kUnrequiredBlock) {
      unrequired = true;
    } else if (p.file == "plan.json") {
      plan_changed = true;
    } else if (p.rule == "plugin-file") {
      plugin_changed = true;
    } else if (p.file.starts_with("results/")) {
      bad_results.insert(p.file);
      if (p.rule == "plan-digest") other_plan.insert(p.file);
    }
  }
  // Every result naming another plan, and none valid: the plan is what changed, not each of them.
  const bool any_valid = std::any_of(v.outcomes.begin(), v.outcomes.end(),
                                     [](const ArmOutcome& o) { return o.result.has_value(); });
  if (plan_changed || (other_plan.size() >= 2 && other_plan == bad_results && !any_valid))
    return {
        "plan.json is not the plan this run's results were measured under (edited or "
        "replaced after they were written): restore the run's own plan.json; a run cannot "
        "be verified or resumed against another plan (start a new run instead)"};
  std::vector<std::string> hints;
  if (plugin_changed)
    hints.push_back(
        "a built plugin under variants/ is not the file the plan hashed: restore it "
        "(the runs root's .cache/builds holds the build it came from, when it was "
        "built there), or start a new run");
  if (!bad_results.empty())
    hints.push_back(std::to_string(bad_results.size()) +
                    " result file(s) above fail their checks (changed, damaged or copied in after "
                    "their worker wrote them) and are not used: to measure those arms again, move "
                    "them out of the run directory (keep them as evidence) and run `abharness "
                    "resume " +
                    run_dir + "`");
  if (unrequired)
    hints.push_back(
        "results of blocks the adaptive rule no longer calls for (its decisions "
        "changed when an arm whose result was missing was measured again): `abharness "
        "resume " +
        run_dir + "` sets them aside under set_aside/unrequired/ and goes on");
  return hints;
}

}  // namespace abh
