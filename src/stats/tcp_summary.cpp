#include "volley/stats/tcp_summary.hpp"

#include <nlohmann/json.hpp>

namespace volley::stats {

namespace {

/// The reading's field for each gauge, in kTcpGauges' order.
constexpr std::array<std::uint64_t TcpReading::*, 11> kReadingGauges{
    &TcpReading::rtt_us,      &TcpReading::rttvar_us, &TcpReading::min_rtt_us,
    &TcpReading::cwnd,        &TcpReading::ssthresh,  &TcpReading::delivery_rate,
    &TcpReading::pacing_rate, &TcpReading::snd_mss,   &TcpReading::rcv_mss,
    &TcpReading::rcv_space,   &TcpReading::reordering};
constexpr std::array<std::uint64_t TcpReading::*, 6> kReadingCounts{
    &TcpReading::retransmits,     &TcpReading::lost,
    &TcpReading::segs_out,        &TcpReading::busy_us,
    &TcpReading::rwnd_limited_us, &TcpReading::sndbuf_limited_us};

}  // namespace

void TcpSummary::add(const TcpReading& r) {
  for (std::size_t i = 0; i < kTcpGauges.size(); ++i) {
    const std::uint64_t value = r.*kReadingGauges[i];
    if (value != TcpReading::kUnset) (this->*kTcpGauges[i].second).add(value);
  }
  for (std::size_t i = 0; i < kTcpCounts.size(); ++i) {
    std::uint64_t& sum = this->*kTcpCounts[i].second;
    sum = saturating_add(sum, r.*kReadingCounts[i]);
  }
}

void TcpSummary::merge(const TcpSummary& other) {
  for (const auto& [name, gauge] : kTcpGauges) (this->*gauge).merge(other.*gauge);
  for (const auto& [name, count] : kTcpCounts) {
    this->*count = saturating_add(this->*count, other.*count);
  }
}

void to_json(nlohmann::json& j, const TcpSummary& s) {
  j = nlohmann::json::object();
  for (const auto& [name, gauge] : kTcpGauges) {
    if (gauge == &TcpSummary::rtt_us || !(s.*gauge).empty()) j[std::string(name)] = s.*gauge;
  }
  for (const auto& [name, count] : kTcpCounts) j[std::string(name)] = s.*count;
}

bool tcp_summary_from_json(const nlohmann::json& j, TcpSummary& out) {
  if (!j.is_object()) return false;
  TcpSummary s;
  for (const auto& [name, gauge] : kTcpGauges) {
    const auto it = j.find(name);
    if (it == j.end() ? gauge == &TcpSummary::rtt_us : !ValueSketch::from_json(*it, s.*gauge)) {
      return false;
    }
  }
  for (const auto& [name, count] : kTcpCounts) {
    const auto it = j.find(name);
    if (it == j.end() || !it->is_number_unsigned()) return false;
    s.*count = it->get<std::uint64_t>();
  }
  out = std::move(s);
  return true;
}

}  // namespace volley::stats
