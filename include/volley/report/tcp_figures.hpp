#pragma once
/// \file
/// What the report says of a transaction's TCP connections (stats::TcpSummary): the shares of
/// busy time held back by the receiver's window and by the send buffer, the retransmitted share
/// of segments, and the figures the result document adds to the summary. Thread: any.
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

/// The document's figures, added to `tcp`, which holds `s` in its own form (stats::to_json: each
/// count, and each gauge a connection had as a sketch with its n, min and max): "connections",
/// each such gauge's "median", and the shares ("rwnd_limited_pct", ...).
void add_tcp_figures(nlohmann::json& tcp, const stats::TcpSummary& s);

}  // namespace volley::report
