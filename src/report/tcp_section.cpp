// The text report's TCP section: per side and transaction, what TCP_INFO said of its
// connections when each strand ended the transaction's step (report/tcp_figures.hpp).
#include <fmt/format.h>

#include <string>

#include "text_sections.hpp"
#include "volley/report/tcp_figures.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

std::string rtt(double us) { return format_ns(us * 1000.0); }

std::string row(const std::string& name, const stats::TcpSummary& s) {
  const TcpShares shares = tcp_shares(s);
  return fmt::format(
      "    {:<22} {:>6} {:>8} {:>8} {:>7.0f} {:>10} {:>8} {:>7.1f}% {:>9.1f}% {:>9.1f}%\n", name,
      s.connections(), rtt(s.rtt_us.quantile(0.5)), rtt(static_cast<double>(s.rtt_us.max())),
      s.cwnd.quantile(0.5), format_bits_per_s(8.0 * s.delivery_rate.quantile(0.5)), s.retransmits,
      shares.retransmit_pct, shares.rwnd_limited_pct, shares.sndbuf_limited_pct);
}

std::string side_rows(const SideReport& side) {
  std::string rows;
  for (const results::GroupResult& g : side.result.groups) {
    for (const results::TxnResult& t : g.transactions) {
      if (!t.stats.tcp.empty()) rows += row(g.name + "/" + t.name, t.stats.tcp);
    }
  }
  return rows.empty() ? rows : "  " + side.host + "\n" + rows;
}

}  // namespace

std::string tcp_section(const RunReport& report) {
  std::string body = side_rows(report.master);
  for (const SideReport& s : report.slaves) body += side_rows(s);
  if (body.empty()) return {};
  return "TCP at each transaction's end (TCP_INFO of its connections: medians, sums, shares of "
         "busy time)\n" +
         fmt::format("    {:<22} {:>6} {:>8} {:>8} {:>7} {:>10} {:>8} {:>8} {:>10} {:>10}\n",
                     "group/transaction", "conns", "rtt p50", "rtt max", "cwnd", "delivery",
                     "retrans", "retr%", "rwnd-lim", "sndbuf-lim") +
         body;
}

}  // namespace volley::report::detail
