// Samples that a timer's tick ties together. CUPTI stamps a kernel's start and end with the GPU's
// global timer, which advances in steps of 32 ns on an H200, so a 1.7 us kernel yields only a few
// distinct times (1,696 and 1,728 ns, say) and the plain median of its samples is always one of
// them. When the kernel's true time lies between two ticks, that median cannot settle: its interval
// stays one tick (1.9 %) wide however many samples come (an arm on the H200 ran to its
// 100,000-sample limit that way), and two arms of one build can read a whole tick apart.
//
// The tick does not hide the time, it rounds it: a kernel starts at a random phase of the tick,
// so a kernel of 1,712 ns reads 1,696 or 1,728 half the time each, and the share of each value
// says where between them the true time lies. The mid-distribution median (Parzen's) reads that
// share: each group of equal values sits at the middle of its share of the samples
// (F_mid(v) = P(X < v) + P(X = v) / 2), the quantile function joins those points with straight
// lines, and the median is where it crosses 1/2. For two values of shares p and 1 - p at a tick
// apart it is the upper value minus p ticks: exactly the time the rounded readings came from.
// Samples without ties are left as they are, so the plain and the mid-distribution median
// coincide on them.
//
// spread_groups applies that quantile function to every sample: the i-th smallest of n becomes
// Q_mid((i - 1/2) / n). The result has no ties wherever the quantile function rises, its plain
// median is the mid-distribution median, and everything downstream (the order-statistic interval
// of median_interval.hpp, the clock adjustment and the bootstrap of statistics.hpp) works on it
// unchanged. Its interval is conservative for tied samples: the median of two tied values moves
// with the binomial spread of their shares, sqrt(p (1 - p) / n) ticks, at most half of the
// spread the spread samples' order statistics give (simulated 1,712 ns kernels on a 32 ns tick:
// the 95 % half-width over 1.96 times the medians' spread is 2.1 with 2 ns of jitter, 1.8 with
// 16 ns, 1.15 with 50 ns; docs/statistics.md, "Ties at the timer's tick"). spread_ties does it
// for a timer's readings, where that timer's tick is known (below).
#pragma once

#include <span>
#include <vector>

namespace abh {

// The tick's readings blurred. CUPTI converts the GPU's timestamps to nanoseconds on the host's
// clock, which moves a reading by a nanosecond or so off the 32 ns grid: on the H200 14 % of a
// 1.7 us Triton kernel's samples read 1,695 or 1,697 beside 1,696, and the sums of a
// nine-kernel PyTorch iteration lay up to 8 ns off it. Taken as values of their own, those
// satellites make the quantile function steep between a tick and its satellite and flat across
// the tick: an interval that claimed 0.017 % where the tick's shares allowed 0.26 %, and a median
// pinned to the tick. So readings are spread only where the timer's tick is known (GPU samples
// record their timer's resolution) and at least 99 % of them lie within a quarter tick of its
// grid: then every sample is first rounded to the grid. Readings of a timer whose tick is not
// known are left as they are, and their median is the plain one: the CPU example's host clock
// reads a 10 ns grid with the same satellites on the 2-core CI machine, and spread without
// knowing it, its sub-microsecond arms stalled (none of six stopped on precision). So the steady
// timer measures its clock's tick (clock_tick_ns) and a CPU arm records it.

// `samples` (in the order taken) rounded to the grid of `tick_ns` and their ties spread along the
// mid-distribution quantile function, in the same order, when on_tick_grid(samples, tick_ns);
// otherwise a copy of `samples`.
std::vector<double> spread_ties(std::span<const double> samples, double tick_ns);

// Whether tick_ns > 0, every sample is finite and at least 99 % of them lie within tick_ns / 4 of a
// multiple of it.
bool on_tick_grid(std::span<const double> samples, double tick_ns);

// The tick of a clock, from the gaps between successive readings of it (ns): the largest tick
// of 1..1000 ns on whose grid (on_tick_grid) the gaps below 1 us lie, and which they fill at two
// multiples or more (each holding 1 % of the gaps or more; equal readings fill multiple 0, as on a
// clock coarser than a call), so that a call that steadily costs 20 ns on a 1 ns clock is not
// taken for a 20 ns tick. 0 with fewer than 100 such gaps or no tick that qualifies. The host's
// steady clock reads such a grid on virtual machines (the 2-core CI machine's advances in 10 ns
// steps, with 1 ns satellites: gaps of 20-21, 29-31, 40-41 ns), which a CPU arm's samples inherit;
// with its tick known their ties are spread like a GPU timer's.
double clock_tick_ns(std::span<const double> gaps);

// The mechanism alone: `samples` (finite) with each group of equal values spread along the
// mid-distribution quantile function, in the same order; a copy when no two are equal.
std::vector<double> spread_groups(std::span<const double> samples);

}  // namespace abh
