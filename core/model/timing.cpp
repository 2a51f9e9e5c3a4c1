#include "model/timing.hpp"

#include <algorithm>
#include <sstream>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {

const std::vector<std::string>& timing_names() {
  static const std::vector<std::string> names{kTimingKernel, kTimingGraph, kTimingLaunch};
  return names;
}

bool device_timer(const std::string& timer) {
  return timer == "cupti" || timer == "events" || timer == "graph";
}

std::string timing_meaning(const std::string& timing) {
  if (timing == kTimingKernel)
    return "the time of one isolated iteration's kernels: GPU time, or host time for a CPU plugin";
  if (timing == kTimingGraph)
    return "per iteration of a replayed CUDA graph, first kernel start to last kernel end";
  if (timing == kTimingLaunch) return "host time from the launch call until the GPU is done";
  return "unknown timing";
}

namespace {

bool known_timing(const std::string& t) {
  const auto& n = timing_names();
  return std::find(n.begin(), n.end(), t) != n.end();
}

}  // namespace

std::vector<std::string> parse_timings(const std::string& list) {
  const std::string fix = ": use one or more of " + join(timing_names(), ", ") +
                          ", comma-separated (e.g. --timing kernel,graph)";
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!known_timing(item))
      throw UsageError("--timing " + quote(list) + ": " + quote(item) + " is not a timing" + fix);
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw UsageError("--timing " + quote(list) + ": " + quote(item) + " is named twice" + fix);
    out.push_back(item);
  }
  if (out.empty()) throw UsageError("--timing " + quote(list) + " names no timing" + fix);
  // getline drops a trailing empty item: "kernel," names nothing after its last comma.
  if (list.back() == ',')
    throw UsageError("--timing " + quote(list) + " ends with a comma that names no timing" + fix);
  return out;
}

std::vector<Shape> expand_timings(const std::vector<Shape>& grid,
                                  const std::vector<std::string>& timings) {
  std::vector<Shape> out;
  out.reserve(grid.size() * timings.size());
  for (const Shape& s : grid)
    for (const std::string& t : timings) {
      Shape p = s;
      p.timing = t;
      if (timings.size() > 1) p.id = s.id + "@" + t;
      out.push_back(std::move(p));
    }
  return out;
}

std::string shape_timing(const Shape& shape) {
  return shape.timing.empty() ? kTimingKernel : shape.timing;
}

MeasureSettings arm_settings(const MeasureSettings& plan, const Shape& shape) {
  MeasureSettings s = plan;
  s.timing = shape_timing(shape);
  return s;
}

void check_plan_shape_id(const std::string& id, const std::string& what) {
  const auto at = id.rfind('@');
  if (at == std::string::npos) return check_safe_name(id, what);
  check_safe_name(id.substr(0, at), what);
  if (!known_timing(id.substr(at + 1)))
    throw Error(what + " " + quote(id) + " ends in '@" + id.substr(at + 1) +
                "', which is not a timing (" + join(timing_names(), ", ") + ")");
}

namespace {
bool times_gpu_work(const std::string& timing) {
  return timing != kTimingKernel;
}
}  // namespace

std::string timing_refusal(const std::string& timing, bool gpu_plugin, const std::string& plugin) {
  if (gpu_plugin || !times_gpu_work(timing)) return "";
  return "timing '" + timing + "' times GPU work (" +
         (timing == kTimingGraph ? std::string("a replayed CUDA graph")
                                 : std::string("launch until the GPU is done")) +
         "), but the " + plugin +
         " plugin runs on the CPU, where the kernel timing already is the host time of a call: "
         "use --timing kernel";
}

std::optional<std::string> first_gpu_timing(const std::string& list) {
  for (const std::string& t : parse_timings(list))
    if (times_gpu_work(t)) return t;
  return std::nullopt;
}

}  // namespace abh
