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

nlohmann::json tcp_json(const stats::TcpSummary& s) {
  nlohmann::json j{{"connections", s.connections()}};
  for (const auto& [name, gauge] : stats::kTcpGauges) {
    const stats::ValueSketch& v = s.*gauge;
    if (v.empty()) continue;
    j[std::string(name)] = {{"n", v.count()},
                            {"min", v.min()},
                            {"median", v.quantile(0.5)},
                            {"max", v.max()}};
  }
  for (const auto& [name, count] : stats::kTcpCounts) j[std::string(name)] = s.*count;
  const TcpShares shares = tcp_shares(s);
  j["rwnd_limited_pct"] = shares.rwnd_limited_pct;
  j["sndbuf_limited_pct"] = shares.sndbuf_limited_pct;
  j["retransmit_pct"] = shares.retransmit_pct;
  return j;
}

}  // namespace volley::report
