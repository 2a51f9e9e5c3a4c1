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
//
// A reading well above the peak is no clock at all: a clock cannot run faster than its peak, so
// the timer stepped between the two stamps (once in about 700 arms on an H100, 2,088 MHz against
// its 1,980 MHz peak, docs/measurements.md). The sample's own time rests on the same timer, so
// the sample goes with its reading, counted; a probe that does so more than a few times is
// broken, and the arm fails rather than record clocks it cannot trust.
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

// How far above the peak a reading may lie (the timer's tick allows ~0.1 % on an H200), and how
// many such readings an arm tolerates beyond 1 % of its samples before its probe counts as broken.
inline constexpr double kAbovePeakFactor = 1.05;
inline constexpr int kAbovePeakTolerated = 2;

class ClockGuard {
 public:
  // floor_fraction 0 keeps every sample that ran below the peak (readings are still recorded).
  ClockGuard(int peak_mhz, double floor_fraction);
  bool enabled() const { return floor_mhz_ > 0; }
  int floor_mhz() const { return floor_mhz_; }
  // One flag per sample of a batch: keep it or not. Counts what it discards, and throws once
  // readings above the peak are more than kAbovePeakTolerated + 1 % of the readings seen.
  std::vector<bool> admit(const std::vector<ClockReading>& batch);
  int rejected() const { return rejected_; }      // below the floor
  int above_peak() const { return above_peak_; }  // above kAbovePeakFactor x the peak

 private:
  int peak_mhz_ = 0;
  int floor_mhz_ = 0;
  int rejected_ = 0;
  int above_peak_ = 0;
  long seen_ = 0;
};

// What a result's note says of samples discarded above the peak; empty when there were none.
std::string above_peak_note(int above_peak, int peak_mhz);

}  // namespace abh::worker
