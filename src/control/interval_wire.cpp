#include "volley/control/interval_wire.hpp"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "json_number.hpp"
#include "volley/control/message.hpp"

namespace volley::control {

using nlohmann::json;

json interval_request(std::uint64_t interval) {
  return message("interval", {{"interval", interval}});
}

std::optional<std::uint64_t> interval_requested(const json& message) {
  return uint_field(message, "interval");
}

std::vector<TxnDatagrams> txn_datagrams(const engine::Plan& plan,
                                        const std::vector<results::SlotStats>& slots) {
  std::map<std::pair<std::size_t, std::size_t>, results::DatagramCounters> by_txn;
  const std::size_t n = std::min(plan.slots.size(), slots.size());
  for (std::size_t i = 0; i < n; ++i) {
    const engine::SlotInfo& info = plan.slots[i];
    const results::DatagramCounters& d = slots[i].counters.datagrams;
    if (!info.flowop || info.uncorrected || !d.any()) continue;
    by_txn[{info.group, info.txn}].merge(d);
  }
  std::vector<TxnDatagrams> out;
  out.reserve(by_txn.size());
  for (const auto& [key, counts] : by_txn) {
    out.push_back(
        {static_cast<std::uint32_t>(key.first), static_cast<std::uint32_t>(key.second), counts});
  }
  return out;
}

std::vector<TxnTcp> txn_tcp(const engine::Plan& plan,
                            const std::vector<results::SlotStats>& slots) {
  std::map<std::pair<std::size_t, std::size_t>, stats::TcpSummary> by_txn;
  const std::size_t n = std::min(plan.slots.size(), slots.size());
  for (std::size_t i = 0; i < n; ++i) {
    const engine::SlotInfo& info = plan.slots[i];
    if (info.flowop || info.uncorrected || slots[i].tcp.empty()) continue;
    by_txn[{info.group, info.txn}].merge(slots[i].tcp);
  }
  std::vector<TxnTcp> out;
  out.reserve(by_txn.size());
  for (auto& [key, tcp] : by_txn) {
    out.push_back({static_cast<std::uint32_t>(key.first), static_cast<std::uint32_t>(key.second),
                   std::move(tcp)});
  }
  return out;
}

json interval_counts_message(std::uint64_t interval, const std::vector<TxnDatagrams>& txns,
                             const std::vector<TxnTcp>& tcp,
                             const std::optional<sampling::ProtocolCounterMap>& kernel) {
  if (txns.size() > kMaxIntervalEntries || tcp.size() > kMaxIntervalEntries) {
    return interval_missing_message(
        interval, fmt::format("{} UDP and {} TCP transactions were active in the interval; at "
                              "most {} of each are reported per interval",
                              txns.size(), tcp.size(), kMaxIntervalEntries));
  }
  json list = json::array();
  for (const TxnDatagrams& t : txns) {
    const results::DatagramCounters& d = t.counts;
    list.push_back(json::array({t.group, t.txn, d.sent, d.received, d.lost, d.late, d.duplicates,
                                d.timeouts, d.jitter_ns}));
  }
  json out = message("interval_counts", {{"interval", interval}, {"udp", std::move(list)}});
  if (!tcp.empty()) {
    json tcp_list = json::array();
    for (const TxnTcp& t : tcp) tcp_list.push_back(json::array({t.group, t.txn, t.tcp}));
    out["tcp"] = std::move(tcp_list);
  }
  if (kernel) {
    json moved = json::object();
    for (const auto& [name, value] : *kernel) {
      if (moved.size() < kMaxIntervalCounters && name.size() <= kMaxCounterNameBytes)
        moved[name] = value;
    }
    out["kernel"] = std::move(moved);
  }
  return out;
}

json interval_missing_message(std::uint64_t interval, std::string why) {
  return message("interval_counts",
                 {{"interval", interval}, {"udp", json::array()}, {"missing", std::move(why)}});
}

std::optional<IntervalPart> interval_part_from_json(const json& message) {
  const auto interval = uint_field(message, "interval");
  if (!interval || !message.contains("udp") || !message.at("udp").is_array()) return std::nullopt;
  IntervalPart part;
  part.interval = *interval;
  part.missing = text_field(message, "missing");
  const json& list = message.at("udp");
  if (list.size() > kMaxIntervalEntries) return std::nullopt;
  try {
    for (const json& e : list) {
      if (!e.is_array() || e.size() != 9) return std::nullopt;
      TxnDatagrams t;
      t.group = static_cast<std::uint32_t>(detail::checked_uint(e[0], UINT32_MAX));
      t.txn = static_cast<std::uint32_t>(detail::checked_uint(e[1], UINT32_MAX));
      results::DatagramCounters& d = t.counts;
      d.sent = detail::checked_uint(e[2]);
      d.received = detail::checked_uint(e[3]);
      d.lost = detail::checked_uint(e[4]);
      d.late = detail::checked_uint(e[5]);
      d.duplicates = detail::checked_uint(e[6]);
      d.timeouts = detail::checked_uint(e[7]);
      d.jitter_ns = detail::checked_uint(e[8]);
      part.txns.push_back(t);
    }
    if (const auto tcp = message.find("tcp"); tcp != message.end()) {
      if (!tcp->is_array() || tcp->size() > kMaxIntervalEntries) return std::nullopt;
      for (const json& e : *tcp) {
        if (!e.is_array() || e.size() != 3) return std::nullopt;
        TxnTcp t;
        t.group = static_cast<std::uint32_t>(detail::checked_uint(e[0], UINT32_MAX));
        t.txn = static_cast<std::uint32_t>(detail::checked_uint(e[1], UINT32_MAX));
        if (!stats::tcp_summary_from_json(e[2], t.tcp)) return std::nullopt;
        part.tcp.push_back(std::move(t));
      }
    }
    if (const auto kernel = message.find("kernel"); kernel != message.end()) {
      if (!kernel->is_object() || kernel->size() > kMaxIntervalCounters) return std::nullopt;
      sampling::ProtocolCounterMap moved;
      for (const auto& [name, value] : kernel->items()) {
        if (name.empty() || name.size() > kMaxCounterNameBytes) return std::nullopt;
        moved.emplace(name, detail::checked_uint(value));
      }
      part.kernel = std::move(moved);
    }
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return part;
}

}  // namespace volley::control
