// Replays the worker's stopping rule on the samples of arms already measured, offline, and says
// what the run would have read had its arms stopped there: each arm's samples and sampling time,
// and each shape's verdict over the first block and over every recorded block, beside the
// recorded ones. The rule is the worker's own code (worker/stopping.cpp, its judged samples and
// its check schedule from worker/sampling.cpp), so a change to it can be tried on GPU arms from
// a machine without a GPU; --slow-narrowing and --narrowing-from try other limits of its
// slow-narrowing test without rebuilding.
//
//   abh_replay_stopping [--slow-narrowing F] [--narrowing-from N] [--arms] RUN_DIR...
//
// A replay can only shorten an arm: it never has more samples than were recorded, and an arm the
// replayed rule would have sampled longer ends where the recording ends ("recorded end"). Each
// check sees the samples up to a point of the worker's geometric check schedule, with the wall
// time of that prefix read as the arm's recorded sampling phase scaled by its share of the
// samples. Result files are read as written (no provenance check: this is analysis, and the
// verdicts it prints are not a report).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "baseline_reference.hpp"
#include "model/outcome.hpp"
#include "model/plan.hpp"
#include "model/result.hpp"
#include "report/report_builder.hpp"
#include "sampling.hpp"
#include "stats/statistics.hpp"
#include "stopping.hpp"

namespace fs = std::filesystem;
using namespace abh;
using namespace abh::worker;

namespace {

struct Options {
  double slow_narrowing = kSlowNarrowing;
  int narrowing_from = kNarrowingFrom;
  bool arms = false;  // print every arm, not only those the replay changes
  std::vector<fs::path> runs;
};

// One check's judging cost per sample judged (worker/sampling.hpp, check_step_fraction: 1.0-1.2
// us on the 2-core build machine); the replay does not time its own checks, which would make
// the schedule depend on this machine.
constexpr double kJudgeSPerSample = 1.1e-6;

double phase_s(const Measurement& m, const std::string& name) {
  for (const ArmPhase& p : m.phases)
    if (p.name == name) return p.seconds;
  return 0;
}

// The first n samples of `m`, with their clocks.
Measurement prefix(const Measurement& m, std::size_t n) {
  Measurement p = m;
  p.samples_ns.resize(n);
  if (!p.clock.sample_mhz.empty()) p.clock.sample_mhz.resize(n);
  return p;
}

// The arm as the rule in `goal` would have left it: its samples cut where the rule stops (or
// where the recording ends), with the evidence and reason of that stop.
Measurement replay_arm(const Measurement& m, const MeasureSettings& s, StoppingGoal goal) {
  const long recorded = static_cast<long>(m.samples_ns.size());
  const double sampling_s = phase_s(m, "sampling");
  const double wall_per_sample = recorded > 0 ? sampling_s / static_cast<double>(recorded) : 0;
  goal.resolution_ns = m.clock.timer_resolution_ns;
  auto rule = make_stopping_rule(s, goal);
  long n = 0, wanted = 0;
  const double step =
      check_step_fraction(kJudgeSPerSample, wall_per_sample > 0 ? wall_per_sample : 0);
  for (;;) {
    n = std::min(recorded, n + samples_before_check(n, s, wanted, step));
    Measurement p = prefix(m, static_cast<std::size_t>(n));
    Progress progress;
    for (double ns : p.samples_ns) progress.measured_s += ns * 1e-9;
    progress.wall_s = static_cast<double>(n) * wall_per_sample;
    if (goal.reference_mhz > 0 && !p.clock.sample_mhz.empty())
      progress.median_mhz = median(p.clock.sample_mhz);
    const std::vector<double> judged = judged_samples(p);
    const StopDecision d = rule->check(judged, progress);
    if (!d.stop && n >= recorded) return m;  // it would have gone on: the recording ends here
    if (d.stop) {
      p.stop = stop_evidence(*rule, d.cause, judged, goal);
      p.stop_reason = d.reason;
      p.measured_time_s = progress.measured_s;
      p.noise = robust_noise(judged);
      return p;
    }
    wanted = d.wanted;
  }
}

struct Arm {
  Task task;
  ArmResult recorded;
  ArmResult replayed;
};

// The candidate's reference as the worker would have read it: the judged medians and clocks of
// the shape's baseline arms (as replayed) that finished before this arm started.
BaselineReference reference_for(const Plan& plan, const Arm& arm, const std::vector<Arm>& arms) {
  if (arm.task.variant == plan.baseline().name) return {};
  std::vector<const Measurement*> before;
  for (const Arm& a : arms)
    if (a.task.shape == arm.task.shape && a.task.variant == plan.baseline().name &&
        a.recorded.finished_at < arm.recorded.started_at)
      before.push_back(&a.replayed.measurement);
  return reference_from(before);
}

// Every recorded arm of the run, replayed in the order the arms started.
std::vector<Arm> replay_run(const Plan& plan, const fs::path& dir, const Options& o) {
  std::vector<Arm> arms;
  for (const Task& t : plan.tasks) {
    if (!fs::exists(result_path(dir, t))) continue;
    ArmResult r = read_result(dir, result_rel(t));
    arms.push_back({t, r, r});
  }
  std::sort(arms.begin(), arms.end(), [](const Arm& a, const Arm& b) {
    return a.recorded.started_at < b.recorded.started_at;
  });
  for (Arm& a : arms) {
    const StatsOptions& decision = plan.schedule.decision;
    StoppingGoal goal{decision.noise_band, decision.confidence, 0};
    const BaselineReference ref = reference_for(plan, a, arms);
    goal.reference_ns = ref.ns;
    goal.reference_mhz = ref.mhz;
    goal.slow_narrowing = o.slow_narrowing;
    goal.narrowing_from = o.narrowing_from;
    a.replayed.measurement =
        replay_arm(a.recorded.measurement, a.recorded.invocation.settings, goal);
  }
  return arms;
}

// The plan's tasks with the given arms' results, of blocks below `blocks` (all: -1).
std::vector<ArmOutcome> outcomes(const Plan& plan, const std::vector<Arm>& arms, bool replayed,
                                 int blocks) {
  std::map<std::pair<std::string, std::string>, const Arm*> by_task;
  for (const Arm& a : arms) by_task[{a.task.shape, a.task.arm}] = &a;
  std::vector<ArmOutcome> out;
  for (const Task& t : plan.tasks) {
    if (blocks >= 0 && t.round >= blocks) continue;
    auto it = by_task.find({t.shape, t.arm});
    if (it == by_task.end()) {
      if (t.conditional) continue;  // a block the sweep did not run
      out.push_back({t, {}, "not recorded"});
      continue;
    }
    out.push_back({t, replayed ? it->second->replayed : it->second->recorded, ""});
  }
  return out;
}

std::string interval_text(const ShapeRow& r) {
  char b[96];
  if (!r.speedup || !r.ci) return to_string(r.verdict);
  std::snprintf(b, sizeof b, "%-9s %.4f [%.4f, %.4f]", to_string(r.verdict).c_str(), *r.speedup,
                r.ci->lo, r.ci->hi);
  return b;
}

// Verdicts of both readings side by side; returns how many shapes' verdicts differ.
int print_verdicts(const Plan& plan, const std::vector<Arm>& arms, int blocks,
                   const std::string& title) {
  const Report rec =
      build_report(plan, outcomes(plan, arms, false, blocks), plan.schedule.decision, "replay");
  const Report rep =
      build_report(plan, outcomes(plan, arms, true, blocks), plan.schedule.decision, "replay");
  std::printf("  %s\n", title.c_str());
  int differ = 0;
  std::vector<double> rec_widths, rep_widths;
  for (std::size_t i = 0; i < rec.shapes.size() && i < rep.shapes.size(); ++i) {
    const bool same = rec.shapes[i].verdict == rep.shapes[i].verdict;
    differ += !same;
    std::printf("    %-28s recorded %-38s replayed %s%s\n", rec.shapes[i].shape.c_str(),
                interval_text(rec.shapes[i]).c_str(), interval_text(rep.shapes[i]).c_str(),
                same ? "" : "  <- differs");
    if (rec.shapes[i].ci && rep.shapes[i].ci) {
      rec_widths.push_back((rec.shapes[i].ci->hi - rec.shapes[i].ci->lo) / 2);
      rep_widths.push_back((rep.shapes[i].ci->hi - rep.shapes[i].ci->lo) / 2);
    }
  }
  if (!rec_widths.empty())
    std::printf("    intervals' half-width, median over shapes: recorded %.3f%%, replayed %.3f%%\n",
                100 * median(rec_widths), 100 * median(rep_widths));
  return differ;
}

void print_run(const fs::path& dir, const Options& o) {
  const Plan plan = load_plan(dir);
  const std::vector<Arm> arms = replay_run(plan, dir, o);
  long rec_n = 0, rep_n = 0;
  double rec_s = 0, rep_s = 0;
  std::printf("%s: %zu arms\n", dir.string().c_str(), arms.size());
  for (const Arm& a : arms) {
    const Measurement& m = a.recorded.measurement;
    const long n = static_cast<long>(m.samples_ns.size());
    const long k = static_cast<long>(a.replayed.measurement.samples_ns.size());
    const double s = phase_s(m, "sampling");
    const double ks = n > 0 ? s * static_cast<double>(k) / static_cast<double>(n) : 0;
    rec_n += n;
    rep_n += k;
    rec_s += s;
    rep_s += ks;
    if (!o.arms && k == n) continue;
    std::printf("  %-28s %-4s %7ld -> %7ld samples, %6.2f -> %6.2f s: %s\n", a.task.shape.c_str(),
                a.task.arm.c_str(), n, k, s, ks, a.replayed.measurement.stop_reason.c_str());
  }
  std::printf("  samples %ld -> %ld, sampling %.1f -> %.1f s\n", rec_n, rep_n, rec_s, rep_s);
  const int first = print_verdicts(plan, arms, plan.schedule.rounds, "first block(s):");
  const int all = print_verdicts(plan, arms, -1, "every recorded block:");
  std::printf("  verdicts that differ: %d (first blocks), %d (every block)\n\n", first, all);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--slow-narrowing" && i + 1 < argc)
      o.slow_narrowing = std::stod(argv[++i]);
    else if (a == "--narrowing-from" && i + 1 < argc)
      o.narrowing_from = std::stoi(argv[++i]);
    else if (a == "--arms")
      o.arms = true;
    else if (!a.empty() && a[0] == '-')
      throw std::runtime_error("unknown option " + a +
                               "; usage: abh_replay_stopping [--slow-narrowing F] "
                               "[--narrowing-from N] [--arms] RUN_DIR...");
    else
      o.runs.emplace_back(a);
  }
  if (o.runs.empty()) throw std::runtime_error("no run directory given");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    std::printf("slow narrowing: %.3g per doubling or slower, judged from %d samples\n\n",
                o.slow_narrowing, o.narrowing_from);
    for (const fs::path& run : o.runs) print_run(run, o);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "abh_replay_stopping: " << e.what() << "\n";
    return 2;
  }
}
