#pragma once
/// \file
/// One interval's counters gathered per transaction (the rows of the JSON "intervals", the CSV
/// and the live line): a transaction's iterations and latency come from its transaction slot,
/// its operations, bytes, errors and expired from its flowop slots.

#include <cstdint>
#include <optional>
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
  std::uint64_t handshakes = 0;  ///< TLS handshakes, full and resumed (IntervalTxnCounters).
  std::uint64_t resumed = 0;
  results::DatagramCounters datagrams;  ///< UDP, the master's side (IntervalTxnCounters).
  /// UDP, the slaves' side added up (IntervalTxnCounters::peer_datagrams); meaningful only when
  /// `peers.complete()`.
  results::DatagramCounters peer_datagrams;
  IntervalPeers peers;          ///< The sample's: whether the slaves' side is whole.
  std::optional<TcpBrief> tcp;  ///< IntervalTxnCounters::tcp
  /// IntervalTxnCounters::peer_tcp; meaningful only when `peers.complete()`.
  std::optional<TcpBrief> peer_tcp;
  double seconds = 0;      ///< The interval's length.
  LatencySummary latency;  ///< Per iteration, ns.

  [[nodiscard]] double per_s(std::uint64_t n) const {
    return seconds > 0 ? static_cast<double>(n) / seconds : 0;
  }
};

/// One direction of a transaction's datagrams over one interval: what the sending side sent,
/// beside what the receiving side counted. A count the master lacks (a slave's, when its
/// interval counts are missing) is nullopt, never 0.
struct DatagramWay {
  bool master_sends = true;           ///< "m->s"; else "s->m"
  std::optional<std::uint64_t> sent;  ///< by the sending side, in the interval
  /// The receiving side's counters in the interval (its `sent` is the other direction's).
  std::optional<results::DatagramCounters> receiver;
  std::string missing;  ///< why the slaves' side is not known, when it is not

  [[nodiscard]] std::string_view way() const { return master_sends ? "m->s" : "s->m"; }
};

/// An interval's loss as the receiver sees it: the gaps it found in the interval minus the late
/// datagrams that filled earlier gaps in it. Negative when more gaps of earlier intervals were
/// filled than new ones opened; the intervals' losses add up to the receiver's loss over the run.
[[nodiscard]] std::int64_t interval_lost(const results::DatagramCounters& receiver);
/// That loss against the sequence numbers the receiver accounted for in the interval (received +
/// lost), in percent; 0 when it accounted for none.
[[nodiscard]] double interval_loss_pct(const results::DatagramCounters& receiver);

/// The directions in which `row` moved datagrams (or timed out waiting for one), m->s first.
[[nodiscard]] std::vector<DatagramWay> datagram_ways(const IntervalTxnRow& row);

/// The rows of `sample`, in slot order: every transaction slot that had any activity (an
/// iteration, operation, byte, error or expiry) or whose transaction is the step running at the
/// end of the interval and is a timed step (so a stall shows as a row of zeros).
[[nodiscard]] std::vector<IntervalTxnRow> interval_txn_rows(const RunReport& report,
                                                            const IntervalSample& sample);

}  // namespace volley::report
