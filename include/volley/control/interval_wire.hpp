#pragma once
// The slaves' share of each interval on the wire (docs/control-protocol.md, "Intervals"). At
// each interval the master asks every slave (`interval{n}`), and the slave answers, per
// transaction (`interval_counts{n, udp, tcp}`), with what its engine counted since its previous
// answer: the datagram counters (what arrived at the slaves beside what the master sent), and
// the TCP state of its connections as it took the interval (TCP_INFO, stats::TcpSummary). The
// master has everything else.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/engine/plan.hpp"
#include "volley/results/slot_stats.hpp"
#include "volley/sampling/kernel_counters.hpp"
#include "volley/stats/tcp_summary.hpp"

namespace volley::control {

/// At most this many transactions in one `interval_counts`: 10 000 entries of at most 170 bytes
/// of JSON each stay under 2 MB, far below any frame limit. A slave with more UDP transactions
/// active in one interval says so instead (`missing`).
inline constexpr std::size_t kMaxIntervalEntries = 10'000;

/// One transaction's datagram counters over one interval, on one side.
struct TxnDatagrams {
  std::uint32_t group = 0;
  std::uint32_t txn = 0;
  results::DatagramCounters counts;
  friend bool operator==(const TxnDatagrams&, const TxnDatagrams&) = default;
};

/// One transaction's TCP connections as one side took an interval.
struct TxnTcp {
  std::uint32_t group = 0;
  std::uint32_t txn = 0;
  stats::TcpSummary tcp;
};

/// A slave's answer for interval `interval`: its counters, or why it has none (`missing`).
struct IntervalPart {
  std::uint64_t interval = 0;
  std::vector<TxnDatagrams> txns;  ///< only transactions that sent or received a datagram
  std::vector<TxnTcp> tcp;         ///< only transactions with a TCP connection open
  /// The slave host's kernel counters that moved over its interval (sampling::moved_counters);
  /// nullopt when it does not read them.
  std::optional<sampling::ProtocolCounterMap> kernel;
  std::string missing;
};

/// At most this many kernel counters in one answer, each name at most kMaxCounterNameBytes.
inline constexpr std::size_t kMaxIntervalCounters = 64;
inline constexpr std::size_t kMaxCounterNameBytes = 64;

/// The master's request: `interval{n}`.
nlohmann::json interval_request(std::uint64_t interval);
/// The interval number of a request; nullopt when malformed.
std::optional<std::uint64_t> interval_requested(const nlohmann::json& message);

/// The datagram counters of `slots` (one take of the engine's interval, indexed like
/// `plan.slots`) added up per transaction, without the transactions that moved no datagram.
std::vector<TxnDatagrams> txn_datagrams(const engine::Plan& plan,
                                        const std::vector<results::SlotStats>& slots);

/// The TCP summaries of `slots` merged per transaction, without the transactions that had no
/// TCP connection open.
std::vector<TxnTcp> txn_tcp(const engine::Plan& plan, const std::vector<results::SlotStats>& slots);

/// `interval_counts{interval, udp: [[group, txn, sent, received, gaps, late, duplicates,
/// timeouts, jitter_ns], ...], tcp: [[group, txn, summary], ...], kernel: {name: moved}}` (`tcp`
/// only when there is one, `kernel` only when given); beyond kMaxIntervalEntries of either list,
/// `missing` says so instead.
nlohmann::json interval_counts_message(
    std::uint64_t interval, const std::vector<TxnDatagrams>& txns,
    const std::vector<TxnTcp>& tcp = {},
    const std::optional<sampling::ProtocolCounterMap>& kernel = {});
/// `interval_counts{interval, udp: [], missing: why}`: this slave cannot count this interval.
nlohmann::json interval_missing_message(std::uint64_t interval, std::string why);
/// The part an `interval_counts` carries; nullopt when it is malformed.
std::optional<IntervalPart> interval_part_from_json(const nlohmann::json& message);

}  // namespace volley::control
