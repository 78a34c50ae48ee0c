#pragma once
/// \file
/// The TCP state of a transaction's connections, summarised across them: what TCP_INFO
/// (linux/tcp.h) says of each connection when its strand ends the transaction's step, so a user
/// can see why a stream ran as fast as it did (a receiver's window, a full send buffer, loss).
/// Gauges (round-trip times, windows, rates) keep their spread as sketches (min, median, max);
/// counts (retransmits, time limited by the window) add up over the connections.
#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include <nlohmann/json_fwd.hpp>

#include "volley/stats/value_sketch.hpp"

namespace volley::stats {

/// One connection's TCP_INFO in the units reported. Counts are the connection's since it
/// opened. Gauges the kernel leaves unset (ssthresh before the first loss, the pacing rate
/// without pacing) are nullopt-like: `kUnset`, and not summarised.
struct TcpReading {
  static constexpr std::uint64_t kUnset = UINT64_MAX;
  std::uint64_t rtt_us = 0;             ///< smoothed round-trip time (tcpi_rtt)
  std::uint64_t rttvar_us = 0;          ///< its variation (tcpi_rttvar)
  std::uint64_t min_rtt_us = 0;         ///< the least seen (tcpi_min_rtt)
  std::uint64_t cwnd = 0;               ///< congestion window, segments (tcpi_snd_cwnd)
  std::uint64_t ssthresh = kUnset;      ///< slow-start threshold, segments (tcpi_snd_ssthresh)
  std::uint64_t delivery_rate = 0;      ///< bytes/s (tcpi_delivery_rate)
  std::uint64_t pacing_rate = kUnset;   ///< bytes/s (tcpi_pacing_rate)
  std::uint64_t snd_mss = 0;            ///< bytes (tcpi_snd_mss)
  std::uint64_t rcv_mss = 0;            ///< bytes (tcpi_rcv_mss)
  std::uint64_t rcv_space = 0;          ///< receive window the kernel sized, bytes (tcpi_rcv_space)
  std::uint64_t reordering = 0;         ///< reordering degree, segments (tcpi_reordering)
  std::uint64_t retransmits = 0;        ///< segments retransmitted (tcpi_total_retrans)
  std::uint64_t lost = 0;               ///< segments thought lost now (tcpi_lost)
  std::uint64_t segs_out = 0;           ///< segments sent (tcpi_segs_out)
  std::uint64_t busy_us = 0;            ///< time with data to send (tcpi_busy_time)
  std::uint64_t rwnd_limited_us = 0;    ///< ... held back by the receiver's window
  std::uint64_t sndbuf_limited_us = 0;  ///< ... held back by the send buffer
};

/// Thread: a plain value. Filled only for transaction slots with TCP connections open at the
/// end of the transaction's step.
struct TcpSummary {
  ValueSketch rtt_us;
  ValueSketch rttvar_us;
  ValueSketch min_rtt_us;
  ValueSketch cwnd;
  ValueSketch ssthresh;
  ValueSketch delivery_rate;
  ValueSketch pacing_rate;
  ValueSketch snd_mss;
  ValueSketch rcv_mss;
  ValueSketch rcv_space;
  ValueSketch reordering;
  std::uint64_t retransmits = 0;
  std::uint64_t lost = 0;
  std::uint64_t segs_out = 0;
  std::uint64_t busy_us = 0;
  std::uint64_t rwnd_limited_us = 0;
  std::uint64_t sndbuf_limited_us = 0;

  /// Connections summarised (every reading has a round-trip time).
  [[nodiscard]] std::uint64_t connections() const { return rtt_us.count(); }
  [[nodiscard]] bool empty() const { return connections() == 0; }
  void add(const TcpReading& r);
  void merge(const TcpSummary& other);
  friend bool operator==(const TcpSummary&, const TcpSummary&) = default;
};

/// The gauges by their JSON names, in report order.
using TcpGauge = std::pair<std::string_view, ValueSketch TcpSummary::*>;
inline constexpr std::array<TcpGauge, 11> kTcpGauges{{
    {"rtt_us", &TcpSummary::rtt_us},
    {"rttvar_us", &TcpSummary::rttvar_us},
    {"min_rtt_us", &TcpSummary::min_rtt_us},
    {"cwnd", &TcpSummary::cwnd},
    {"ssthresh", &TcpSummary::ssthresh},
    {"delivery_rate", &TcpSummary::delivery_rate},
    {"pacing_rate", &TcpSummary::pacing_rate},
    {"snd_mss", &TcpSummary::snd_mss},
    {"rcv_mss", &TcpSummary::rcv_mss},
    {"rcv_space", &TcpSummary::rcv_space},
    {"reordering", &TcpSummary::reordering},
}};
/// The counts by their JSON names.
using TcpCount = std::pair<std::string_view, std::uint64_t TcpSummary::*>;
inline constexpr std::array<TcpCount, 6> kTcpCounts{{
    {"retransmits", &TcpSummary::retransmits},
    {"lost", &TcpSummary::lost},
    {"segs_out", &TcpSummary::segs_out},
    {"busy_us", &TcpSummary::busy_us},
    {"rwnd_limited_us", &TcpSummary::rwnd_limited_us},
    {"sndbuf_limited_us", &TcpSummary::sndbuf_limited_us},
}};

/// The complete form (results and the wire): each count, and each gauge's sketch (ValueSketch's
/// form), except the gauges no connection had; `rtt_us`, which every connection has, is always
/// there.
void to_json(nlohmann::json& j, const TcpSummary& s);
/// A gauge left out reads as empty. false (and `out` untouched) when `rtt_us` or a count is
/// missing, or a field is malformed.
[[nodiscard]] bool tcp_summary_from_json(const nlohmann::json& j, TcpSummary& out);

}  // namespace volley::stats
