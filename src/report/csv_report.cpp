#include "volley/report/csv_report.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ostream>

#include "volley/report/interval_rows.hpp"

namespace volley::report {

std::string csv_field(std::string_view text) {
  const bool needs_quotes = text.find_first_of(",\"\r\n") != std::string_view::npos ||
                            (!text.empty() && (text.front() == ' ' || text.front() == '\t' ||
                                               text.back() == ' ' || text.back() == '\t'));
  if (!needs_quotes) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

namespace {

/// The slaves' UDP columns: empty when the run asked for none (no UDP) or some are missing.
std::string slave_udp(const IntervalTxnRow& row) {
  if (!row.peers.complete()) return ",,,,,,";
  const results::DatagramCounters& p = row.peer_datagrams;
  return fmt::format("{},{},{},{},{},{},{}", p.sent, p.received, interval_lost(p), p.late,
                     p.duplicates, p.timeouts, p.jitter_ns);
}

/// The TCP columns of one side: empty for a transaction without TCP connections at the
/// interval's end, or whose slaves' figures are missing.
std::string tcp_columns(const std::optional<TcpBrief>& brief) {
  if (!brief) return ",,,,,,";
  const TcpBrief& t = *brief;
  return fmt::format("{},{},{},{},{},{},{}", t.connections, t.rtt_p50_us, t.cwnd_p50,
                     t.delivery_rate_p50, t.retransmits, t.shares.rwnd_limited_pct,
                     t.shares.sndbuf_limited_pct);
}

}  // namespace

void write_interval_csv(const RunReport& report, std::ostream& out) {
  out << kIntervalCsvHeader << '\n';
  for (const IntervalSample& sample : report.intervals) {
    const double t_s = std::chrono::duration<double>(sample.since_run_start).count();
    const double length_s = std::chrono::duration<double>(sample.length).count();
    for (const IntervalTxnRow& row : interval_txn_rows(report, sample)) {
      const results::DatagramCounters& d = row.datagrams;
      const std::optional<TcpBrief> slave_tcp = row.peers.complete() ? row.peer_tcp : std::nullopt;
      out << fmt::format(
          "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
          sample.start_unix_ns, t_s, length_s, sample.step, csv_field(row.group_name),
          csv_field(row.txn_name), row.transactions, row.per_s(row.transactions), row.ops,
          row.per_s(row.ops), row.bytes, 8.0 * row.per_s(row.bytes), row.errors, row.latency.p50_ns,
          row.latency.p99_ns, d.sent, d.received, interval_lost(d), d.late, d.duplicates,
          d.timeouts, d.jitter_ns, slave_udp(row), tcp_columns(row.tcp), tcp_columns(slave_tcp),
          row.handshakes, row.resumed, row.per_s(row.handshakes));
    }
  }
}

}  // namespace volley::report
