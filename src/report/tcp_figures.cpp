#include "volley/report/tcp_figures.hpp"

#include <string>

namespace volley::report {

namespace {

double pct(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

TcpShares tcp_shares(const stats::TcpSummary& s) {
  return {pct(s.rwnd_limited_us, s.busy_us), pct(s.sndbuf_limited_us, s.busy_us),
          pct(s.retransmits, s.segs_out)};
}

TcpBrief tcp_brief(const stats::TcpSummary& s) {
  return {s.connections(),      s.rtt_us.quantile(0.5),
          s.cwnd.quantile(0.5), s.delivery_rate.quantile(0.5),
          s.retransmits,        tcp_shares(s)};
}

nlohmann::json tcp_brief_json(const TcpBrief& b) {
  return {{"connections", b.connections},
          {"rtt_p50_us", b.rtt_p50_us},
          {"cwnd_p50", b.cwnd_p50},
          {"delivery_rate_p50", b.delivery_rate_p50},
          {"retransmits", b.retransmits},
          {"rwnd_limited_pct", b.shares.rwnd_limited_pct},
          {"sndbuf_limited_pct", b.shares.sndbuf_limited_pct}};
}

void add_tcp_figures(nlohmann::json& tcp, const stats::TcpSummary& s) {
  tcp["connections"] = s.connections();
  for (const auto& [name, gauge] : stats::kTcpGauges) {
    const stats::ValueSketch& v = s.*gauge;
    if (!v.empty()) tcp[std::string(name)]["median"] = v.quantile(0.5);
  }
  const TcpShares shares = tcp_shares(s);
  tcp["rwnd_limited_pct"] = shares.rwnd_limited_pct;
  tcp["sndbuf_limited_pct"] = shares.sndbuf_limited_pct;
  tcp["retransmit_pct"] = shares.retransmit_pct;
}

}  // namespace volley::report
