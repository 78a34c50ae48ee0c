#pragma once
// What one side (master or a slave) measured in one run: plain values, mergeable, serialisable.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "volley/engine/slot_stats.hpp"

namespace volley::engine {

struct FlowopResult {
  std::string type;
  SlotStats stats;
};

struct TxnResult {
  std::string name;
  SlotStats stats;  ///< ops = iterations; latency = per iteration (from intended start when paced)
  std::optional<stats::LatencyHistogram> uncorrected_latency;  ///< paced transactions only
  std::vector<FlowopResult> flowops;
};

struct GroupResult {
  std::string name;
  std::uint64_t strands = 0;
  std::vector<TxnResult> transactions;
};

/// The wall-clock window of one barrier step (transaction index) on this side.
struct TxnWindow {
  std::int64_t start_unix_ns = 0;
  std::chrono::nanoseconds elapsed{0};
  bool is_duration = false;  ///< some group bounds this step by time
};

/// One side's first errors, with enough context to act on.
struct ErrorSample {
  std::string where;    ///< group/txn/flowop
  std::string message;  ///< error_code message plus peer
};

struct RunResult {
  std::vector<GroupResult> groups;
  std::vector<TxnWindow> windows;
  std::uint64_t connections_requested = 0;
  std::uint64_t connections_established = 0;
  std::uint64_t failed_strands = 0;  ///< strands stopped by an error without canfail
  std::vector<ErrorSample> error_samples;

  [[nodiscard]] SlotCounters totals() const;  ///< over every flowop slot
  [[nodiscard]] std::uint64_t transactions() const;  ///< iterations of all transactions
};

}  // namespace volley::engine
