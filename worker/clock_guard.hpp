// The clock floor, the worker's guard against throttled arms: a GPU sample counts only if the SM
// clock over it was at least a fraction of the GPU's peak clock; slower samples are discarded and
// the worker idles so the clock can recover.
//
// Why: under sustained cold-L2 GEMMs an H200 sits at its software power cap and its SM clock
// wanders between 1245 and 1980 MHz from arm to arm (docs/measurements.md §7). A median over such
// samples measures the power controller as much as the kernel: two arms of one revision differed
// by up to 3.5 %. Keeping only the samples that ran at full clock measures every arm at the same
// clock, which is what an A/B comparison needs. The price is stated in docs/method.md: a kernel
// that is faster only until the power cap catches it still looks faster, and the number of
// discarded samples per arm is recorded so that a reviewer can see which side drew more power.
//
// The clock over a sample is read by two probe kernels around it (worker/gpu/clock_probe.hpp):
// SM cycles over %globaltimer nanoseconds. The timer ticks coarsely (its resolution is measured
// per arm), so a reading carries an upper bound; a sample is discarded only when even that bound
// is below the floor, never because the timer was too coarse to tell.
#pragma once

#include <string>
#include <vector>

namespace abh::worker {

struct ClockReading {
  double mhz = 0;       // SM cycles / elapsed time over the sample
  double mhz_high = 0;  // the same with the elapsed time shortened by one timer tick
};

// Computes a reading from the probe's raw values, taken on one SM: the global timer (ns) and the
// SM cycle counter at the opening and the closing probe. False when they cannot give a clock.
bool clock_reading(unsigned long long open_ns, unsigned long long open_cycles,
                   unsigned long long close_ns, unsigned long long close_cycles,
                   double resolution_ns, ClockReading* out);

class ClockGuard {
 public:
  // floor_fraction 0 keeps every sample (readings are still recorded).
  ClockGuard(int peak_mhz, double floor_fraction);
  bool enabled() const { return floor_mhz_ > 0; }
  int floor_mhz() const { return floor_mhz_; }
  // One flag per sample of a batch: keep it or not. Counts what it discards.
  std::vector<bool> admit(const std::vector<ClockReading>& batch);
  int rejected() const { return rejected_; }

 private:
  int floor_mhz_ = 0;
  int rejected_ = 0;
};

}  // namespace abh::worker
