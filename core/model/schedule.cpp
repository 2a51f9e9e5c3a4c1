#include "model/schedule.hpp"

#include <map>
#include <random>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

using Pattern = std::function<std::string(int round, std::mt19937_64& rng)>;

// Each pattern yields one block of arm letters per round, e.g. "ABA".
const std::map<std::string, Pattern>& registry() {
  static const std::map<std::string, Pattern> r = {
      {"aba", [](int, std::mt19937_64&) { return std::string("ABA"); }},
      {"abba", [](int, std::mt19937_64&) { return std::string("ABBA"); }},
      // Seeded random block order: AB or BA per block, so drift becomes variance instead of bias.
      {"random", [](int, std::mt19937_64& rng) { return std::string(rng() & 1 ? "AB" : "BA"); }},
  };
  return r;
}

// One block of a variants-file schedule: indices into the variants (0 is the baseline).
std::vector<std::size_t> nway_block(const std::string& name, std::size_t k, std::mt19937_64& rng) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < k; ++i) order.push_back(i);
  if (name == "aba") {
    order.push_back(0);
  } else if (name == "abba") {
    for (std::size_t i = k; i-- > 0;) order.push_back(i);
  } else {
    // random: Fisher-Yates with the plan's seeded generator, the same order on every platform.
    for (std::size_t i = k - 1; i > 0; --i) std::swap(order[i], order[rng() % (i + 1)]);
  }
  return order;
}

// The planned blocks alone must give one variant two arms, or nothing measures how much whole
// arms differ and no interval can be trusted.
void require_two_arms(const std::vector<Task>& tasks, std::size_t first, const ScheduleOptions& opt,
                      const std::string& baseline) {
  std::map<std::string, int> planned;
  for (std::size_t i = first; i < tasks.size(); ++i)
    if (!tasks[i].conditional) ++planned[tasks[i].variant];
  for (const auto& [variant, arms] : planned)
    if (arms >= 2) return;
  throw UsageError("--schedule " + opt.name + " with --rounds " + std::to_string(opt.rounds) +
                   " gives each shape one " + baseline +
                   " arm and one arm of each other variant: the variation between arms cannot "
                   "be estimated; use --rounds 2 or more");
}

}  // namespace

json to_json(const ScheduleOptions& o) {
  json j{{"name", o.name},
         {"rounds", o.rounds},
         {"seed", o.seed},
         {"gpus", o.gpus},
         {"until_decided", o.until_decided},
         {"confirm", o.confirm},
         {"until_decided_auto", o.until_decided_auto},
         {"futility", o.futility},
         {"decision", to_json(o.decision)},
         {"start_ahead", o.start_ahead}};
  if (o.share_host) j["share_host"] = true;  // absent otherwise: plans keep their earlier bytes
  return j;
}

ScheduleOptions schedule_options_from_json(const json& j, const std::string& where) {
  ScheduleOptions o;
  o.name = field<std::string>(j, "name", where);
  o.rounds = field<int>(j, "rounds", where);
  o.seed = field<std::uint64_t>(j, "seed", where);
  o.gpus = field<int>(j, "gpus", where);
  // Absent in reports written before adaptive rounds (plans of that time have another schema
  // version and are refused as a whole): none were planned.
  if (j.contains("until_decided")) o.until_decided = field<int>(j, "until_decided", where);
  // Absent in plans written before confirmation blocks and `--until-decided auto`.
  if (j.contains("confirm")) o.confirm = field<bool>(j, "confirm", where);
  if (j.contains("until_decided_auto"))
    o.until_decided_auto = field<bool>(j, "until_decided_auto", where);
  // Absent in plans written before the rule withheld blocks that cannot decide a shape.
  if (j.contains("futility")) o.futility = field<bool>(j, "futility", where);
  if (j.contains("decision"))
    o.decision = stats_options_from_json(object_field(j, "decision", where), where + ".decision");
  // Absent in plans and reports written before workers were started ahead: they were not.
  if (j.contains("start_ahead")) o.start_ahead = field<int>(j, "start_ahead", where);
  if (j.contains("share_host")) o.share_host = field<bool>(j, "share_host", where);
  return o;
}

std::vector<std::string> schedule_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : registry()) out.push_back(k);
  return out;
}

std::vector<Task> make_schedule(const std::vector<Shape>& shapes, const ScheduleOptions& opt,
                                const std::vector<std::string>& variants) {
  auto it = registry().find(opt.name);
  if (it == registry().end()) {
    throw UsageError("--schedule '" + opt.name + "' is unknown: use one of " +
                     join(schedule_names(), ", "));
  }
  if (opt.rounds < 1) throw UsageError("--rounds must be >= 1");
  if (opt.gpus < 1) throw UsageError("--gpus must name at least one GPU");
  if (opt.until_decided < 0) throw UsageError("--until-decided must be >= 0");
  if (variants.size() < 2) throw UsageError("a run compares at least two variants");
  std::mt19937_64 rng(opt.seed);
  std::vector<Task> tasks;
  const bool letters = variants == two_variants();
  for (size_t s = 0; s < shapes.size() && !letters; ++s) {
    const size_t first = tasks.size();
    std::map<std::size_t, int> count;
    for (int r = 0; r < opt.rounds + opt.until_decided; ++r)
      for (std::size_t v : nway_block(opt.name, variants.size(), rng)) {
        Task t;
        t.shape = shapes[s].id;
        t.variant = variants[v];
        t.arm = variants[v] + "." + std::to_string(++count[v]);
        t.round = r;
        t.gpu = static_cast<int>(s % static_cast<size_t>(opt.gpus));
        t.conditional = r >= opt.rounds;
        tasks.push_back(std::move(t));
      }
    require_two_arms(tasks, first, opt, variants[0]);
  }
  for (size_t s = 0; s < shapes.size() && letters; ++s) {
    // This shape's tasks are the ones from here on: each loop below looks at them only, so a
    // grid's schedule costs one pass, not one pass over every earlier shape's tasks per shape.
    const size_t first = tasks.size();
    std::map<char, int> count;
    for (int r = 0; r < opt.rounds + opt.until_decided; ++r) {
      for (char c : it->second(r, rng)) {
        Task t;
        t.shape = shapes[s].id;
        t.variant = c == 'A' ? "baseline" : "candidate";
        t.arm = std::string(1, c) + std::to_string(++count[c]);
        t.round = r;
        t.gpu = static_cast<int>(s % static_cast<size_t>(opt.gpus));
        t.conditional = r >= opt.rounds;
        tasks.push_back(std::move(t));
      }
    }
    // The planned blocks alone must give one variant two arms, or nothing measures how much
    // whole arms differ and no interval can be trusted.
    int planned_a = 0, planned_b = 0;
    for (size_t i = first; i < tasks.size(); ++i)
      if (!tasks[i].conditional) ++(tasks[i].variant == "baseline" ? planned_a : planned_b);
    if (planned_a < 2 && planned_b < 2)
      throw UsageError("--schedule " + opt.name + " with --rounds " + std::to_string(opt.rounds) +
                       " gives each shape one baseline and one candidate arm: the variation "
                       "between arms cannot be estimated; use --rounds 2 or more");
    // The classic single-B ABA names its candidate arm plainly "B".
    if (count['B'] == 1)
      for (size_t i = first; i < tasks.size(); ++i)
        if (tasks[i].arm == "B1") tasks[i].arm = "B";
  }
  return tasks;
}

}  // namespace abh
