#pragma once
/// \file
/// What the report says of a transaction's TCP connections (stats::TcpSummary): the shares of
/// busy time held back by the receiver's window and by the send buffer, the retransmitted share
/// of segments, and the summary's form in the result document. Thread: any.
#include <nlohmann/json.hpp>

#include "volley/stats/tcp_summary.hpp"

namespace volley::report {

struct TcpShares {
  /// Of the time the connections had data to send (tcpi_busy_time), the share the receiver's
  /// window held them back (tcpi_rwnd_limited) and the share their send buffer did
  /// (tcpi_sndbuf_limited); 0 without busy time.
  double rwnd_limited_pct = 0;
  double sndbuf_limited_pct = 0;
  /// Segments retransmitted over segments sent; 0 without segments sent.
  double retransmit_pct = 0;
};
[[nodiscard]] TcpShares tcp_shares(const stats::TcpSummary& s);

/// What an interval keeps of a transaction's connections (a few numbers, so a long run's series
/// stays small): medians, the retransmits so far, and the shares of busy time so far.
struct TcpBrief {
  std::uint64_t connections = 0;
  double rtt_p50_us = 0;
  double cwnd_p50 = 0;
  double delivery_rate_p50 = 0;  ///< bytes/s
  std::uint64_t retransmits = 0;
  TcpShares shares;
};
[[nodiscard]] TcpBrief tcp_brief(const stats::TcpSummary& s);
[[nodiscard]] nlohmann::json tcp_brief_json(const TcpBrief& b);

/// The document form: "connections", each gauge as {"n", "min", "median", "max"} (gauges no
/// connection had are left out), each count, and the shares ("rwnd_limited_pct", ...).
[[nodiscard]] nlohmann::json tcp_json(const stats::TcpSummary& s);

}  // namespace volley::report
