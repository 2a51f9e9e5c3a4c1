#include "gpu/clock_probe.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "gpu/clock_probe_kernels.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cuda_owner.hpp"

namespace abh::worker::gpu {

// Pinned host words that the GPU writes directly (mapped memory): the stamps land where the host
// reads them once the stream is idle, with no copy. Not in an anonymous namespace:
// ClockProbe::Impl, which has external linkage, holds one (GCC warns when a unity build includes
// this file).
class MappedWords {
 public:
  MappedWords(size_t n, const std::string& what)
      : host_(host_alloc(n * sizeof(unsigned long long), cudaHostAllocMapped,
                         "cudaHostAlloc of " + std::to_string(n * sizeof(unsigned long long)) +
                             " bytes (" + what + ")")) {
    cuda_check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_), host_.get(), 0),
               "cudaHostGetDevicePointer (" + what + ")");
  }
  unsigned long long* host() const { return static_cast<unsigned long long*>(host_.get()); }
  unsigned long long* dev() const { return dev_; }

 private:
  HostBuffer host_;
  unsigned long long* dev_ = nullptr;  // the same words as the GPU addresses them
};

struct ClockProbe::Impl {
  cudaStream_t stream = nullptr;
  int capacity = 0;
  int blocks = 0;  // one per SM, so that the stamps spread over the SMs
  int slots = 0;   // %nsmid: stamp slots per probe
  int peak_mhz = 0;
  double resolution_ns = 0;
  std::unique_ptr<MappedWords> words;  // [sample][open|close][slot][timer|cycles]

  size_t probe_words() const { return static_cast<size_t>(slots) * 2; }
  unsigned long long* stamps(unsigned long long* base, int sample, int which) const {
    return base + (static_cast<size_t>(sample) * 2 + static_cast<size_t>(which)) * probe_words();
  }
};

ClockProbe::ClockProbe(int device, void* stream, int capacity) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.stream = static_cast<cudaStream_t>(stream);
  m.capacity = std::max(1, capacity);
  int khz = 0;
  cuda_check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device),
             "cudaDeviceGetAttribute(ClockRate)");
  m.peak_mhz = khz / 1000;
  cuda_check(cudaDeviceGetAttribute(&m.blocks, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(MultiProcessorCount)");

  MappedWords calib(2, "timer-resolution probe");
  unsigned long long* c = calib.host();
  c[0] = c[1] = 0;
  cuda_check(launch_timer_resolution(m.stream, calib.dev()),
             "launching the timer-resolution probe");
  cuda_check(cudaStreamSynchronize(m.stream), "cudaStreamSynchronize (timer-resolution probe)");
  if (c[0] == 0 || c[1] == 0)
    throw Error(
        "the GPU's %globaltimer did not advance (or %nsmid read 0) in the clock probe: "
        "samples cannot be clocked on this GPU (please report it with `abharness doctor`)");
  m.resolution_ns = static_cast<double>(c[0]);
  m.slots = static_cast<int>(c[1]);
  m.words = std::make_unique<MappedWords>(static_cast<size_t>(m.capacity) * 2 * m.probe_words(),
                                          "clock stamps");
}

ClockProbe::~ClockProbe() = default;

int ClockProbe::capacity() const {
  return impl_->capacity;
}
int ClockProbe::peak_mhz() const {
  return impl_->peak_mhz;
}
double ClockProbe::timer_resolution_ns() const {
  return impl_->resolution_ns;
}

void ClockProbe::reset(int count) {
  const Impl& m = *impl_;
  if (count > m.capacity)
    throw Error("clock probe: " + std::to_string(count) + " samples exceed its capacity of " +
                std::to_string(m.capacity));
  std::memset(m.words->host(), 0,
              static_cast<size_t>(count) * 2 * m.probe_words() * sizeof(unsigned long long));
}

void ClockProbe::open(int sample) {
  const Impl& m = *impl_;
  cuda_check(launch_clock_stamp(m.stream, m.blocks, m.stamps(m.words->dev(), sample, 0), m.slots),
             "launching the opening clock stamp");
}

void ClockProbe::close(int sample) {
  const Impl& m = *impl_;
  cuda_check(launch_clock_stamp(m.stream, m.blocks, m.stamps(m.words->dev(), sample, 1), m.slots),
             "launching the closing clock stamp");
}

std::vector<ClockReading> ClockProbe::read(int count) const {
  const Impl& m = *impl_;
  std::vector<ClockReading> out;
  out.reserve(static_cast<size_t>(count));
  std::vector<double> mhz, high;
  for (int i = 0; i < count; ++i) {
    const unsigned long long* a = m.stamps(m.words->host(), i, 0);
    const unsigned long long* b = m.stamps(m.words->host(), i, 1);
    mhz.clear();
    high.clear();
    for (int s = 0; s < m.slots; ++s) {
      ClockReading r;
      if (a[2 * s] == 0 || b[2 * s] == 0) continue;  // no stamp from this SM in one of the two
      if (!clock_reading(a[2 * s], a[2 * s + 1], b[2 * s], b[2 * s + 1], m.resolution_ns, &r))
        continue;
      mhz.push_back(r.mhz);
      high.push_back(r.mhz_high);
    }
    if (mhz.empty())
      throw Error("clock probe: no SM ran both stamps around sample " + std::to_string(i) +
                  ", so its clock is unknown: the stamps ran on no common SM (is another process "
                  "filling the GPU?)");
    // The median over SMs: one SM's counter is enough, several guard against an odd one.
    std::nth_element(mhz.begin(), mhz.begin() + static_cast<long>(mhz.size() / 2), mhz.end());
    std::nth_element(high.begin(), high.begin() + static_cast<long>(high.size() / 2), high.end());
    out.push_back({mhz[mhz.size() / 2], high[high.size() / 2]});
  }
  return out;
}

}  // namespace abh::worker::gpu
