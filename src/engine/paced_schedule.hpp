#pragma once
// A paced transaction's schedule on one strand (rate=R: R iterations a second per strand).
// Iteration i of strand k of a group of N strands is intended at
//   start + period * (k / N) + period * i,    period = 1 / R,
// so the group's strands are spread evenly over one period and the group sends at a steady
// aggregate rate rather than in one burst per period. k and N count the group's strands over
// all of a side's processes (strand k runs in process k % processes), so every process spreads
// its share the same way. A late iteration starts at once; its latency counts from its intended
// start (wrk2's correction), and the schedule's count of what it asked for (intended_before)
// is what the run's check of the rate compares its iterations with.
#include <chrono>
#include <cstdint>

namespace volley::engine {

class PacedSchedule {
 public:
  using Clock = std::chrono::steady_clock;

  /// Strand `index` of a group of `strands`, at `rate` iterations a second (> 0).
  PacedSchedule(double rate, std::uint64_t index, std::uint64_t strands)
      : period_(1.0 / rate),
        phase_(strands > 1
                   ? period_ * (static_cast<double>(index % strands) / static_cast<double>(strands))
                   : std::chrono::duration<double>(0)) {}

  /// Iteration i's intended start, from the step's start.
  [[nodiscard]] Clock::duration offset(std::uint64_t i) const {
    return std::chrono::round<Clock::duration>(phase_ + period_ * static_cast<double>(i));
  }

  /// The iterations whose intended start is before `length` (a step of that duration): those the
  /// schedule asks for within the step. Found with offset() itself, so that it counts exactly
  /// the iterations the strand's loop may start (it starts none intended at or after its end).
  [[nodiscard]] std::uint64_t intended_before(Clock::duration length) const {
    if (length <= Clock::duration::zero()) return 0;
    const double estimate =
        (std::chrono::duration<double>(length) - phase_) / period_;  // iterations, about
    std::uint64_t n = estimate > 0 ? static_cast<std::uint64_t>(estimate) : 0;
    while (n > 0 && offset(n - 1) >= length) --n;
    while (offset(n) < length) ++n;
    return n;
  }

  [[nodiscard]] std::chrono::duration<double> period() const { return period_; }
  [[nodiscard]] std::chrono::duration<double> phase() const { return phase_; }

 private:
  std::chrono::duration<double> period_;
  std::chrono::duration<double> phase_;
};

}  // namespace volley::engine
