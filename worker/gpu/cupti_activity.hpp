// CUPTI Activity collection, shared by the timers that read kernel records (cupti_timer.cpp: one
// iteration at a time; graph_timer.cpp: the kernels of a graph replay).
//
// Work is tagged with external correlation ids: while an id is pushed, every runtime and driver
// API call made on this thread gets an EXTERNAL_CORRELATION record mapping its correlationId to
// the id, and every kernel record carries the correlationId of the call that launched it (for a
// graph's kernels, the graph launch). Joining the two gives exactly the kernels launched inside a
// window; work outside any window (an L2 flush, a clock stamp, a tactic's warm-up launch) carries
// no id and is left out.
//
// Activity state is process-global: callbacks are registered and kinds enabled once per process
// (one worker process per arm keeps one CUPTI session per arm).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph_cut.hpp"

namespace abh::worker::gpu {

struct KernelRecord {
  std::uint32_t correlation = 0;
  KernelSpan span;
};

struct Drained {
  std::vector<KernelRecord> kernels;
  std::unordered_map<std::uint32_t, std::uint64_t> external;  // correlationId -> window id
  std::size_t dropped = 0;
  std::string error;
};

// Registers the buffer callbacks and enables the activity kinds on the first call; returns the
// error of that first attempt on every call ("" when CUPTI is ready), so that a broken setup
// cannot be half-used.
const std::string& enable_cupti_once();

// `count` fresh window ids, unique in the process: base, base + 1, ...
std::uint64_t reserve_window_ids(int count);

// Pushes window `id` for the lifetime of the object and pops it (checking that the stack still
// holds it) in close(). The destructor pops too, without checking, when an exception left the
// window open.
class Window {
 public:
  explicit Window(std::uint64_t id);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  void close();

 private:
  std::uint64_t id_;
  bool open_ = true;
};

// Waits for the device, forces CUPTI to hand over every buffer and takes what was collected.
// Throws when the records are incomplete (dropped) or CUPTI reported an error.
Drained drain();

// The kernels of windows [base, base + count), one list per window.
std::vector<std::vector<const KernelRecord*>> kernels_by_window(const Drained& d,
                                                                std::uint64_t base, int count);

// ABH_STARTUP_TRACE=1 (worker_protocol.hpp): prints the steady-clock time at which the process's
// first timed work is enqueued, once.
void trace_first_iteration();

}  // namespace abh::worker::gpu
