#pragma once
/// \file
/// What limited a run, named from the figures both ends measured: a short list of findings, each
/// with its evidence and what to change. Every rule and its threshold is in docs/results.md
/// ("Bottleneck"); a clean loopback ping-pong fires none but the full CPU. Pure function over a
/// RunReport. Thread: any.

#include <string>
#include <string_view>
#include <vector>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// The rules, in the order findings are listed.
enum class BottleneckRule {
  kListenOverflow,    ///< TcpExt.ListenOverflows moved: the accept queue was full
  kRetransmits,       ///< Tcp.RetransSegs at least 0.1% of Tcp.OutSegs (and 10 segments)
  kUdpReceiveBuffer,  ///< Udp.RcvbufErrors: datagrams the receiving socket had no room for
  kReceiveWindow,     ///< a timed transaction's connections held back by the peer's window
  kSendBuffer,        ///< ... by their own send buffer
  kSoftirqCpu,        ///< one CPU at least 90% busy, at least half of it in softirq
  kCpuFull,           ///< the host's CPUs at least 95% busy over the timed part
};
[[nodiscard]] std::string_view to_string(BottleneckRule rule);  ///< "listen_overflow", ...

/// One finding on one host.
struct Bottleneck {
  BottleneckRule rule = BottleneckRule::kCpuFull;
  std::string host;      ///< "master" or the slave's remotehost
  std::string evidence;  ///< what was measured, with the counter or figure it comes from
  std::string advice;    ///< what to change
};

/// The rules' thresholds (docs/results.md).
inline constexpr double kRetransmitPct = 0.1;
inline constexpr std::uint64_t kRetransmitMin = 10;
inline constexpr double kSoftirqCpuBusyPct = 90;
inline constexpr double kSoftirqSharePct = 50;
inline constexpr double kCpuFullPct = 95;
/// A timed transaction's connections held back this share of their busy time (tcpi_busy_time)
/// by the window or by the send buffer, over at least kTcpBusyMinUs of busy time in all.
inline constexpr double kTcpLimitedPct = 50;
inline constexpr std::uint64_t kTcpBusyMinUs = 100'000;

/// Every rule that fires, per host (the master first, then the slaves in order), rule order
/// within a host. A side without figures (a missing slave, no /proc) fires nothing.
[[nodiscard]] std::vector<Bottleneck> find_bottlenecks(const RunReport& report);

}  // namespace volley::report
