#include "preflight.hpp"

#include <algorithm>
#include <cstdio>

#include "launcher.hpp"
#include "model/plan.hpp"
#include "stats/statistics.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "system/text.hpp"

namespace abh {

namespace {

// The launcher's flags, and the flags only some launchers can honour; what depends on the
// plugin's device is filled in when the plan is made.
void check_launcher_request(const PlanRequest& req) {
  const Launcher& launcher = launcher_named(req.launcher.name);
  launcher.resolve(req.launcher, false);
  if (req.schedule.until_decided > 0 && !launcher.runs_until_decided())
    throw UsageError("--until-decided " + std::to_string(req.schedule.until_decided) + ": the " +
                     req.launcher.name +
                     " launcher runs each lane's arms in one job, without the rounds between "
                     "which the extension decides; use --rounds, or --launcher local");
  if (!req.cpus.empty() && launcher_places_lanes(req.launcher))
    throw UsageError("--cpus " + req.cpus + ": with --launcher " + req.launcher.name +
                     " each lane chooses the CPUs on its node, within those its job may use; ask "
                     "the launcher for them instead (e.g. --slurm-sbatch-arg=--cpus-per-task=8)");
  if (req.schedule.share_host && launcher_places_lanes(req.launcher))
    throw UsageError("--share-host: with --launcher " + req.launcher.name +
                     " no run holds this machine's lock (the scheduler gives each job its own "
                     "resources), so there is nothing to share; leave --share-host out");
}

// --python, when given, names an interpreter that exists: it is run only after both variants are
// built, too late for a typo.
void check_python_flag(const std::string& python) {
  if (python.empty()) return;
  try {
    find_program(python);
  } catch (const Error&) {
    throw UsageError("--python " + quote(python) +
                     ": no such interpreter (not an executable file, nor a program on PATH); give "
                     "the path of a CPython >= 3.9, or leave --python out to use the manifest's "
                     "or python3");
  }
}

std::string megabytes(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  return b;
}

// The bytes of plan.json a request's shapes and tasks take for a number of blocks of each shape,
// bounded from above: each task is counted as the largest of its shape can be (the last block's
// round, the longest arm name the schedule reaches, the last lane, one CPU: a lane's least, and
// the plan's writer checks the plan as placed).
class PlanSize {
 public:
  PlanSize(const PlanRequest& req, const std::vector<Shape>& shapes, std::uint64_t arms)
      : shapes_(shapes), arms_(arms) {
    // The longest name the tasks can carry: "candidate", or a variants file's longest.
    const std::vector<std::string> names = variant_names(requested_variants(req));
    letters_ = names == two_variants();
    for (const std::string& n : names)
      if (n.size() > task_.variant.size()) task_.variant = n;
    task_.gpu = static_cast<int>(split_gpus(req.gpus).size()) - 1;
    if (!launcher_places_lanes(req.launcher)) task_.cpus = {allowed_cpus(req.cpus).back()};
    for (const Shape& s : shapes) fixed_ += plan_bytes_of(s);
  }
  double bytes(std::uint64_t blocks) const {
    return static_cast<double>(fixed_) +
           static_cast<double>(block_bytes(blocks)) * static_cast<double>(blocks);
  }
  // Whether `blocks` blocks of each shape fit in `limit` bytes (by default what plan.json's
  // reader accepts).
  bool fits(std::uint64_t blocks, std::uintmax_t limit = kPlanMaxBytes) const {
    return fixed_ < limit && blocks <= (limit - fixed_) / block_bytes(blocks);
  }
  // The most blocks that fit in `limit` (fewer blocks never take more bytes), below `above`.
  std::uint64_t most_blocks(std::uint64_t above, std::uintmax_t limit = kPlanMaxBytes) const {
    std::uint64_t lo = 0, hi = above;  // fits(lo), !fits(hi)
    while (hi - lo > 1) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      (fits(mid, limit) ? lo : hi) = mid;
    }
    return lo;
  }

 private:
  std::uintmax_t block_bytes(std::uint64_t blocks) const {
    Task t = task_;
    t.arm = (letters_ ? std::string("A") : task_.variant + ".") + std::to_string(blocks * arms_);
    t.round = static_cast<int>(std::min<std::uint64_t>(blocks, 1u << 30));
    // Only the shape's id differs from task to task: its escaped text adds to a task without one
    // (a task written per shape was 3 % of the time to the first arm at 50,000 shapes).
    t.shape.clear();
    const std::uintmax_t without_id = plan_bytes_of(t) - json(std::string()).dump().size();
    std::uintmax_t sum = 0;
    for (const Shape& s : shapes_) sum += arms_ * (without_id + json(s.id).dump().size());
    return sum;
  }
  const std::vector<Shape>& shapes_;
  std::uint64_t arms_;
  Task task_;
  bool letters_ = true;  // arms named A1, B, A2 (two variants), else <variant>.<n>
  std::uintmax_t fixed_ = kPlanReserveBytes;  // the shapes, and the rest of the plan
};

// The refusal of a plan too large for its reader, with the flag to change and the most it may be.
[[noreturn]] void refuse_plan_size(const PlanRequest& req, std::size_t shapes, std::uint64_t arms,
                                   std::uint64_t blocks, double bytes, std::uint64_t max_blocks) {
  const ScheduleOptions& s = req.schedule;
  const std::string what =
      std::to_string(shapes * arms * blocks) + " tasks (" + std::to_string(shapes) + " shapes x " +
      std::to_string(arms) + " arms x " + std::to_string(blocks) + " blocks: --rounds " +
      std::to_string(s.rounds) + " + --until-decided " + std::to_string(s.until_decided) +
      "), about " + megabytes(bytes) + " of plan.json, and abharness reads plans of at most " +
      std::to_string(kPlanMaxBytes >> 20) + " MiB (every worker reads its run's plan)";
  std::string fix;
  if (max_blocks == 0)
    fix = "even one block of each shape does not fit: split the grid into several runs";
  else if (s.until_decided > 0 && static_cast<std::uint64_t>(s.rounds) < max_blocks)
    fix = "with this grid give --until-decided " +
          std::to_string(max_blocks - static_cast<std::uint64_t>(s.rounds)) +
          " or less (or split the grid into several runs)";
  else
    fix = "with this grid give --rounds " + std::to_string(max_blocks) +
          " or less and no --until-decided (or split the grid into several runs)";
  const std::string flag = s.until_decided > 0
                               ? "--until-decided " + std::to_string(s.until_decided)
                               : "--rounds " + std::to_string(s.rounds);
  throw UsageError(flag + ": the plan would hold " + what + "; " + fix);
}

}  // namespace

void check_options(const PlanRequest& req) {
  validate(req.settings);
  validate(req.schedule.decision);
  check_launcher_request(req);
  resolve_start_ahead(req.start_ahead, false, false);
  split_gpus(req.gpus);
  if (!launcher_places_lanes(req.launcher)) allowed_cpus(req.cpus);
  check_python_flag(req.python);
}

int check_schedule(const PlanRequest& req, const std::vector<Shape>& shapes) {
  // One shape's schedule validates the options: a schedule that gives a shape too few arms with
  // few rounds does so with its first two, and --until-decided adds blocks like its first.
  ScheduleOptions few = req.schedule;
  few.rounds = std::min(few.rounds, 2);
  few.until_decided = std::min(few.until_decided, 1);
  few.gpus = 1;
  const std::vector<Task> sample =
      make_schedule({shapes.front()}, few, variant_names(requested_variants(req)));
  const std::uint64_t arms =
      sample.size() / static_cast<std::uint64_t>(few.rounds + few.until_decided);
  const std::uint64_t blocks = static_cast<std::uint64_t>(req.schedule.rounds) +
                               static_cast<std::uint64_t>(req.schedule.until_decided);
  const PlanSize size(req, shapes, arms);
  if (!size.fits(blocks))
    refuse_plan_size(req, shapes.size(), arms, blocks, size.bytes(blocks),
                     size.most_blocks(blocks));
  if (!req.schedule.until_decided_auto) return 0;
  // auto never asks for more than 3 extra blocks (planner.hpp).
  const std::uint64_t most = size.most_blocks(blocks + 4, kAutoPlanBytes);
  return static_cast<int>(most > blocks ? most - blocks : 0);
}

}  // namespace abh
