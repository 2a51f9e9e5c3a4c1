#include "adaptive_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <set>
#include <utility>

#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "system/run_dir_fs.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

std::string relative_result(const fs::path& run_dir, const Task& t) {
  return result_path(run_dir, t).lexically_relative(run_dir).generic_string();
}

// The undecided shapes the rule gave no block that all their blocks left could not decide: the
// first three with the widths that say why, then how many more.
void say_withheld(const std::vector<std::string>& withheld) {
  const std::size_t shown = std::min<std::size_t>(withheld.size(), 3);
  std::cerr << "until decided: no more blocks for "
            << join(std::vector<std::string>(withheld.begin(), withheld.begin() + shown), "; ")
            << (withheld.size() > shown
                    ? " and " + std::to_string(withheld.size() - shown) + " more shape(s)"
                    : "")
            << " (docs/statistics.md#blocks-that-cannot-decide)\n";
}

// Results of blocks the rule no longer calls for are set aside (adaptive_sweep.hpp); true when
// any were. Nothing is moved when validation found any other problem.
bool set_aside_unrequired(const fs::path& run_dir, const Validation& v) {
  const bool only_unrequired =
      !v.problems.empty() && std::all_of(v.problems.begin(), v.problems.end(),
                                         [](const auto& p) { return p.rule == kUnrequiredBlock; });
  if (!only_unrequired) return false;
  const RunDirFs run(run_dir);
  for (const ProvenanceProblem& p : v.problems) {
    const fs::path aside =
        fs::path("set_aside/unrequired") / fs::path(p.file).lexically_relative("results");
    fs::path to = aside;
    for (int i = 1; run.kind(to) != RunDirFs::Kind::absent; ++i)
      to = aside.string() + "." + std::to_string(i);
    run.make_dirs(to.parent_path());
    run.move(p.file, to);
    std::cerr << "until decided: set aside " << p.file << " (now " << to.generic_string()
              << "): expected " << p.expected
              << "; it was measured under an earlier decision, before an arm that decision "
                 "judged was measured again\n";
  }
  return true;
}

// The run validated for the next decision, with results of blocks no longer called for set aside.
Validation validate_for_extension(const fs::path& run_dir, const Plan& plan,
                                  const Validation* earlier) {
  Validation v = validate_run(run_dir, plan, adaptive_blocks, earlier);
  if (set_aside_unrequired(run_dir, v)) v = validate_run(run_dir, plan, adaptive_blocks);
  return v;
}

}  // namespace

int run_adaptive_blocks(const fs::path& run_dir, const Plan& plan, const WorkerStarter& starter,
                        SweepOptions opt) {
  if (plan.schedule.until_decided == 0) return 0;
  const auto start = std::chrono::steady_clock::now();
  int ran = 0;
  Validation v = validate_for_extension(run_dir, plan, nullptr);
  while (v.problems.empty()) {
    const AdaptiveBlocks blocks = adaptive_blocks(plan, v.outcomes);
    std::set<std::string> done;
    for (const auto& o : v.outcomes)
      if (o.result) done.insert(relative_result(run_dir, o.task));
    auto wanted = [&](const Task& t) { return t.conditional && in_effect(t, blocks); };
    std::vector<std::string> pending;
    for (const auto& t : plan.tasks) {
      const std::string what = t.shape + " block " + std::to_string(t.round);
      if (wanted(t) && !done.count(relative_result(run_dir, t)) &&
          (pending.empty() || pending.back() != what))
        pending.push_back(what);
    }
    if (pending.empty()) {
      if (!opt.quiet && !blocks.withheld.empty()) say_withheld(blocks.withheld);
      break;
    }
    if (!opt.quiet)
      std::cerr << "until decided: running " << join(pending, ", ")
                << " (undecided so far, or decided on one candidate arm)\n";
    opt.select = wanted;
    const SweepSummary s = run_sweep(run_dir, plan, starter, done, opt);
    ran += s.ran;
    opt = warmed_by(std::move(opt), s);
    // A failed arm stops the extension: the next decision would rest on a missing arm. Resume
    // measures it again and continues.
    if (s.failed > 0 || s.ran == 0) break;
    v = validate_for_extension(run_dir, plan, &v);
  }
  if (ran > 0 && !opt.quiet)
    std::cerr << "until decided: " << ran << " more arm(s) in "
              << std::lround(std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                                 .count())
              << " s\n";
  return ran;
}

}  // namespace abh
