#pragma once
/// \file
/// One interval's counters gathered per transaction (the rows of the JSON "intervals", the CSV
/// and the live line): a transaction's iterations and latency come from its transaction slot,
/// its operations, bytes, errors and expired from its flowop slots.

#include <cstdint>
#include <string>
#include <vector>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// One transaction over one interval. Thread: any (value type).
struct IntervalTxnRow {
  std::size_t group = 0;
  std::size_t txn = 0;     ///< The barrier step (transaction index).
  std::string name;        ///< "group0/txn2" (SlotName::name of the transaction slot).
  std::string group_name;  ///< The group's name from the master's result, else "group0".
  std::string txn_name;    ///< The transaction's name from the master's result, else "txn2".
  std::uint64_t transactions = 0;  ///< Iterations completed in the interval.
  std::uint64_t ops = 0;           ///< Flowop operations completed in the interval.
  std::uint64_t bytes = 0;         ///< Bytes read + written.
  std::uint64_t errors = 0;        ///< Errors of every kind.
  std::uint64_t expired = 0;
  engine::DatagramCounters datagrams;  ///< UDP, the master's side (IntervalTxnCounters).
  double seconds = 0;      ///< The interval's length.
  LatencySummary latency;  ///< Per iteration, ns.

  [[nodiscard]] double per_s(std::uint64_t n) const {
    return seconds > 0 ? static_cast<double>(n) / seconds : 0;
  }
};

/// The rows of `sample`, in slot order: every transaction slot that had any activity (an
/// iteration, operation, byte, error or expiry) or whose transaction is the step running at the
/// end of the interval and is a timed step (so a stall shows as a row of zeros).
[[nodiscard]] std::vector<IntervalTxnRow> interval_txn_rows(const RunReport& report,
                                                            const IntervalSample& sample);

}  // namespace volley::report
