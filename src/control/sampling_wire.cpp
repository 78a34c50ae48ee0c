#include "volley/control/sampling_wire.hpp"

#include <limits>

#include "json_number.hpp"

namespace volley::control {

using nlohmann::json;

namespace {

sampling::CpuBreakdown breakdown_from_json(const json& j) {
  sampling::CpuBreakdown b;
  b.usr_pct = j.at("usr_pct").get<double>();
  b.sys_pct = j.at("sys_pct").get<double>();
  b.irq_pct = j.at("irq_pct").get<double>();
  b.softirq_pct = j.at("softirq_pct").get<double>();
  b.iowait_pct = j.at("iowait_pct").get<double>();
  b.steal_pct = j.at("steal_pct").get<double>();
  b.idle_pct = j.at("idle_pct").get<double>();
  b.busy_pct = j.at("busy_pct").get<double>();
  return b;
}

}  // namespace

std::optional<sampling::CpuUsage> cpu_usage_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    sampling::CpuUsage u;
    u.wall_s = j.at("wall_s").get<double>();
    if (!j.at("total").is_null()) u.total = breakdown_from_json(j.at("total"));
    for (const auto& c : j.at("per_cpu")) {
      u.per_cpu.push_back({static_cast<unsigned>(detail::checked_uint(c.at("cpu"), std::numeric_limits<unsigned>::max())), breakdown_from_json(c)});
    }
    if (const auto& h = j.at("hottest_cpu"); !h.is_null()) {
      u.hottest = sampling::HottestCore{static_cast<unsigned>(detail::checked_uint(h.at("cpu"), std::numeric_limits<unsigned>::max())), h.at("busy_pct").get<double>()};
    }
    if (const auto& p = j.at("process"); !p.is_null()) {
      u.process = sampling::ProcessUsage{p.at("user_s").get<double>(), p.at("sys_s").get<double>(),
                                         p.at("core_pct").get<double>(), p.at("cores").get<double>()};
    }
    return u;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::optional<sampling::NicRates> nic_rates_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    sampling::NicRates rates;
    rates.wall_s = j.at("wall_s").get<double>();
    for (const auto& [name, r] : j.at("interfaces").items()) {
      sampling::NicRate rate;
      rate.rx_bytes_per_s = r.at("rx_bytes_per_s").get<double>();
      rate.tx_bytes_per_s = r.at("tx_bytes_per_s").get<double>();
      rate.rx_bits_per_s = r.at("rx_bits_per_s").get<double>();
      rate.tx_bits_per_s = r.at("tx_bits_per_s").get<double>();
      rate.rx_packets_per_s = r.at("rx_packets_per_s").get<double>();
      rate.tx_packets_per_s = r.at("tx_packets_per_s").get<double>();
      rate.rx_errors_per_s = r.at("rx_errors_per_s").get<double>();
      rate.tx_errors_per_s = r.at("tx_errors_per_s").get<double>();
      rate.rx_drops_per_s = r.at("rx_drops_per_s").get<double>();
      rate.tx_drops_per_s = r.at("tx_drops_per_s").get<double>();
      rates.interfaces.emplace(name, rate);
    }
    return rates;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace volley::control
