#pragma once
/// \file
/// The interval time series as CSV (one header row, then one row per interval per transaction,
/// see interval_rows.hpp for which transactions get a row). Columns (docs/results.md):
/// start_unix_ns,t_s,length_s,step,group,transaction,transactions,transactions_per_s,ops,
/// ops_per_s,bytes,bits_per_s,errors,p50_ns,p99_ns, then the master's UDP counters (udp_*) and
/// the slaves' (slave_udp_*, empty when their counts for the interval are missing), then the
/// master's TCP brief (tcp_*) and the slaves' (slave_tcp_*, empty when missing)

#include <iosfwd>
#include <string>
#include <string_view>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// The header row's text, without the line end.
inline constexpr std::string_view kIntervalCsvHeader =
    "start_unix_ns,t_s,length_s,step,group,transaction,transactions,transactions_per_s,ops,"
    "ops_per_s,bytes,bits_per_s,errors,p50_ns,p99_ns,udp_sent,udp_received,udp_lost,udp_late,"
    "udp_duplicates,udp_timeouts,udp_jitter_ns,slave_udp_sent,slave_udp_received,slave_udp_lost,"
    "slave_udp_late,slave_udp_duplicates,slave_udp_timeouts,slave_udp_jitter_ns,tcp_connections,"
    "tcp_rtt_p50_us,tcp_cwnd_p50,tcp_delivery_rate_p50,tcp_retransmits,tcp_rwnd_limited_pct,"
    "tcp_sndbuf_limited_pct,slave_tcp_connections,slave_tcp_rtt_p50_us,slave_tcp_cwnd_p50,"
    "slave_tcp_delivery_rate_p50,slave_tcp_retransmits,slave_tcp_rwnd_limited_pct,"
    "slave_tcp_sndbuf_limited_pct,tls_handshakes,tls_resumed,tls_handshakes_per_s";

/// RFC 4180 field: quoted (with inner quotes doubled) when it holds a comma, a quote, a line
/// break or leading/trailing blanks; unchanged otherwise.
[[nodiscard]] std::string csv_field(std::string_view text);

/// Header and rows, "\n" line ends. Thread: any.
void write_interval_csv(const RunReport& report, std::ostream& out);

}  // namespace volley::report
