// What is timed: a recorded choice of every measurement (docs/method.md, "Three timings").
//   kernel  the GPU time of one isolated iteration's kernels, cold L2 (CUPTI; the host clock on
//           the CPU): what the kernel itself costs;
//   graph   iterations captured into a CUDA graph and replayed, each timed from its first kernel's
//           start to its last kernel's end: what a serving engine that replays graphs pays, gaps
//           between an iteration's kernels included;
//   launch  host time from the launch call until the work is done: what an eager user pays,
//           the launcher's host work included.
// A run may ask for several (`--timing kernel,graph`): each grid shape then becomes one plan shape
// per timing, `<shape>@<timing>`, with arms of its own, so a comparison never mixes two timings
// and each arm is one measurement under one timing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/grid.hpp"
#include "model/settings.hpp"

namespace abh {

inline constexpr const char* kTimingKernel = "kernel";
inline constexpr const char* kTimingGraph = "graph";
inline constexpr const char* kTimingLaunch = "launch";

// Whether a timer (an arm's measurement.timer: cupti, events, graph, launch, steady) reads the
// GPU's own clock, where the host's load and the process's state do not reach; launch and steady
// time the host.
bool device_timer(const std::string& timer);

// kernel, graph, launch.
const std::vector<std::string>& timing_names();

// What a timing answers, in a few words, for reports: "host time from the launch call until the GPU
// is done".
std::string timing_meaning(const std::string& timing);

// The timings of a `--timing` value: a comma-separated list of timing names, each at most once,
// in the order given. UsageError naming the flag, the bad entry and the names there are.
std::vector<std::string> parse_timings(const std::string& list);

// The shapes a plan measures: each grid shape once per timing, the timings of a shape next to
// each other; the id is the grid's with "@<timing>" appended when there are several timings, the
// grid's own when there is one. Every plan shape records its timing.
std::vector<Shape> expand_timings(const std::vector<Shape>& grid,
                                  const std::vector<std::string>& timings);

// The timing a plan shape is measured under: its own, or kernel for a shape that records none
// (plans written before timings were recorded, which timed kernels).
std::string shape_timing(const Shape& shape);

// The settings one arm measures under: the plan's, with the timing of its shape (the plan's
// settings hold the list asked for). What a result's invocation records.
MeasureSettings arm_settings(const MeasureSettings& plan, const Shape& shape);

// Throws Error unless `id` is a shape id of a plan: a grid shape id, optionally followed by
// "@<timing>" with a known timing.
void check_plan_shape_id(const std::string& id, const std::string& what);

// Whether a timing can time a plugin of this device ("cpu" or "cuda"): graph and launch time GPU
// work only. Empty when it can, else the reason with the fix.
std::string timing_refusal(const std::string& timing, bool gpu_plugin, const std::string& plugin);

// The first timing of a `--timing` list that times GPU work (graph, launch), or nullopt when it
// asks for kernel timing only, which a CPU plugin can be timed by too.
std::optional<std::string> first_gpu_timing(const std::string& list);

}  // namespace abh
