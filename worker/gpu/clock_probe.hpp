// Reads the SM clock over each timed sample (worker/clock_guard.hpp says why): a stamp kernel
// before the sample and one after it, both outside the timed window, each recording the global
// timer and the SM cycle counter; cycles over nanoseconds is the clock the sample ran at.
#pragma once

#include <memory>
#include <vector>

#include "sampling.hpp"

namespace abh::worker::gpu {

class ClockProbe final : public SampleClock {
 public:
  // Measures the global timer's resolution on `stream` and holds stamps for `capacity` samples.
  ClockProbe(int device, void* stream, int capacity);
  ~ClockProbe();
  ClockProbe(const ClockProbe&) = delete;
  ClockProbe& operator=(const ClockProbe&) = delete;

  int capacity() const override;
  int peak_mhz() const override;  // the GPU's peak SM clock (cudaDevAttrClockRate)
  double timer_resolution_ns() const override;
  // Clears the stamps of samples [0, count); call with the device idle, before enqueuing them.
  void reset(int count) override;
  void open(int sample) override;   // enqueues the stamp before sample `sample`
  void close(int sample) override;  // enqueues the stamp after it
  // With the device idle again: one reading per sample. Throws when a sample has no SM that both
  // stamps ran on (never a guessed clock).
  std::vector<ClockReading> read(int count) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace abh::worker::gpu
