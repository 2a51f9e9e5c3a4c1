// `abharness verify`: validate every result of a run against its plan, on demand, and print the
// result-set digest that reports quote.
#include <algorithm>
#include <iostream>

#include "bisect/spec.hpp"
#include "conclude.hpp"
#include "exit_codes.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "run_command.hpp"
#include "run_lock.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

// An incomplete run's arms without a valid result, the first ten by name with why, and how to
// measure them: resume, unless the run is live (another abharness is measuring them now).
void say_missing(const Validation& v, const std::string& dir, bool live) {
  std::vector<std::string> missing;
  for (const auto& o : v.outcomes)
    if (!o.result) missing.push_back(o.task.shape + "/" + o.task.arm + " (" + o.failure + ")");
  if (missing.empty()) return;
  const std::size_t shown = std::min<std::size_t>(missing.size(), 10);
  std::cout << "without a valid result: "
            << join(std::vector<std::string>(missing.begin(), missing.begin() + shown), ", ")
            << (missing.size() > shown ? " and " + std::to_string(missing.size() - shown) + " more"
                                       : "")
            << (live ? "\nthe run is live: another abharness is measuring them now\n"
                     : "\n`abharness resume " + quote(dir) + "` measures them\n");
}

// Hidden temp files of writes that were interrupted: not results and not problems, but named, so
// that nothing under results/ goes unaccounted for.
void say_leftovers(const Validation& v, const std::string& dir) {
  if (v.leftovers.empty()) return;
  std::vector<std::string> named;  // a file's name is anyone's text: printed printable
  for (std::size_t i = 0; i < v.leftovers.size() && i < 10; ++i)
    named.push_back(printable(v.leftovers[i]));
  std::cout << "not counted: " << v.leftovers.size() << " interrupted write"
            << (v.leftovers.size() == 1 ? "" : "s") << " (hidden temp files): " << join(named, ", ")
            << (v.leftovers.size() > named.size() ? " and more" : "") << "; `abharness resume "
            << quote(dir) << "` removes them\n";
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto* c = app.add_subcommand("verify", "validate every result of a run against its plan");
  c->add_option("run", *dir, "run directory")->required()->check(CLI::ExistingDirectory);
  c->footer(
      "Example:\n  abharness verify runs/20261129-120000-abc123\nPrints the result-set "
      "digest that reports quote; exit 3 names each file and field that failed.");
  c->callback([dir, &exit_code] {
    if (bisect::is_bisect_dir(*dir)) {
      exit_code = verify_bisect(*dir);
      return;
    }
    Plan plan = load_plan(*dir);
    Validation v = validate_run(*dir, plan, adaptive_blocks);
    if (!v.problems.empty()) {
      print_problems(v, *dir);
      exit_code = exit_code::kProvenance;
      return;
    }
    int valid = 0;
    for (const auto& o : v.outcomes) valid += o.result ? 1 : 0;
    std::cout << "verified " << valid << " of " << v.outcomes.size() << " planned results of run "
              << plan.run_id << "\nresult-set digest: " << v.result_set_digest << "\n";
    say_missing(v, *dir, run_is_live(*dir));
    say_leftovers(v, *dir);
    exit_code = v.complete() ? exit_code::kSuccess : exit_code::kIncomplete;
  });
}

}  // namespace abh
