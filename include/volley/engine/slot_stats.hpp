#pragma once
// What is counted for one stat slot (one flowop, or one transaction, of one group). The hot path
// only touches a worker's own SlotStats: no locks, no atomics.
#include <array>
#include <cstdint>

#include "volley/engine/error_kind.hpp"
#include "volley/stats/latency_histogram.hpp"

namespace volley::engine {

/// Counters of one slot. For a transaction slot `ops` counts completed iterations.
struct SlotCounters {
  std::uint64_t ops = 0;            ///< completed operations (or transaction iterations)
  std::uint64_t bytes_read = 0;     ///< bytes received, partial operations included
  std::uint64_t bytes_written = 0;  ///< bytes sent, partial operations included
  std::uint64_t expired = 0;        ///< cut by the end of a duration transaction or a stop
  std::array<std::uint64_t, kErrorKindCount> errors{};

  [[nodiscard]] std::uint64_t error_total() const;
  [[nodiscard]] std::uint64_t bytes() const { return bytes_read + bytes_written; }
  void merge(const SlotCounters& other);
  friend bool operator==(const SlotCounters&, const SlotCounters&) = default;
};

/// Counters plus the latency distribution of completed operations (ns).
struct SlotStats {
  SlotCounters counters;
  stats::LatencyHistogram latency;

  void merge(const SlotStats& other);
  void reset();
};

}  // namespace volley::engine
