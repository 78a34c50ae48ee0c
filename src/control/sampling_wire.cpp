#include "volley/control/sampling_wire.hpp"

#include <algorithm>
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

constexpr std::size_t kMaxProblemBytes = 512;

bool watched(std::string_view name) {
  const auto names = sampling::watched_protocol_counters();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A list of counter names, each at most once: only the watched ones are kept.
std::vector<std::string> watched_names(const json& j) {
  if (!j.is_array() || j.size() > sampling::watched_protocol_counters().size()) {
    throw json::type_error::create(302, "not a list of counter names", &j);
  }
  std::vector<std::string> out;
  for (const auto& name : j) {
    if (watched(name.get_ref<const std::string&>())) out.push_back(name.get<std::string>());
  }
  return out;
}

std::vector<std::string> problems_from_json(const json& j) {
  if (!j.is_array() || j.size() > kMaxKernelProblems) {
    throw json::type_error::create(302, "too many kernel counter problems", &j);
  }
  std::vector<std::string> out;
  for (const auto& p : j) {
    const auto& text = p.get_ref<const std::string&>();
    out.push_back(text.substr(0, kMaxProblemBytes));
  }
  return out;
}

std::vector<sampling::SoftnetDelta> softnet_from_json(const json& j) {
  if (!j.at("per_cpu").is_array() || j.at("per_cpu").size() > kMaxKernelCpus) {
    throw json::type_error::create(302, "too many softnet CPUs", &j);
  }
  std::vector<sampling::SoftnetDelta> out;
  for (const auto& c : j.at("per_cpu")) {
    out.push_back({static_cast<unsigned>(detail::checked_uint(
                       c.at("cpu"), std::numeric_limits<std::uint32_t>::max())),
                   detail::checked_uint(c.at("processed")), detail::checked_uint(c.at("dropped")),
                   detail::checked_uint(c.at("time_squeeze"))});
  }
  return out;
}

}  // namespace

std::optional<sampling::CpuUsage> cpu_usage_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    sampling::CpuUsage u;
    u.wall_s = j.at("wall_s").get<double>();
    if (!j.at("total").is_null()) u.total = breakdown_from_json(j.at("total"));
    for (const auto& c : j.at("per_cpu")) {
      u.per_cpu.push_back({static_cast<unsigned>(detail::checked_uint(
                               c.at("cpu"), std::numeric_limits<unsigned>::max())),
                           breakdown_from_json(c)});
    }
    if (const auto& h = j.at("hottest_cpu"); !h.is_null()) {
      u.hottest = sampling::HottestCore{static_cast<unsigned>(detail::checked_uint(
                                            h.at("cpu"), std::numeric_limits<unsigned>::max())),
                                        h.at("busy_pct").get<double>()};
    }
    if (const auto& p = j.at("process"); !p.is_null()) {
      u.process =
          sampling::ProcessUsage{p.at("user_s").get<double>(), p.at("sys_s").get<double>(),
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

std::optional<sampling::KernelCounterDeltas> kernel_counters_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    sampling::KernelCounterDeltas d;
    d.wall_s = j.at("wall_s").get<double>();
    for (const auto& [name, value] : j.at("counters").items()) {
      const auto v = detail::checked_uint(value);
      if (watched(name)) d.counters.emplace(name, v);
    }
    d.absent = watched_names(j.at("absent"));
    d.went_backwards = watched_names(j.at("went_backwards"));
    if (const auto& s = j.at("softnet"); !s.is_null()) d.softnet = softnet_from_json(s);
    d.problems = problems_from_json(j.at("problems"));
    return d;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace volley::control
