#include "volley/control/connected_wire.hpp"

namespace volley::control {

using nlohmann::json;

namespace {
/// An unsigned JSON number no larger than `max`.
std::optional<std::uint64_t> bounded(const json& j, std::uint64_t max) {
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() > max) return std::nullopt;
  return j.get<std::uint64_t>();
}
}  // namespace

json port_counts_to_json(const PortCounts& counts) {
  json out = json::array();
  for (const auto& [port, n] : counts) out.push_back(json::array({port, n}));
  return out;
}

std::optional<PortCounts> port_counts_from(const json& m) {
  const auto it = m.find("connected");
  if (it == m.end() || !it->is_array()) return std::nullopt;
  PortCounts out;
  for (const auto& entry : *it) {
    if (!entry.is_array() || entry.size() != 2) return std::nullopt;
    const auto port = bounded(entry[0], 65535);
    const auto n = bounded(entry[1], UINT64_MAX);
    if (!port || !n) return std::nullopt;
    if (!out.emplace(static_cast<std::uint16_t>(*port), *n).second) return std::nullopt;
  }
  return out;
}

json host_port_counts_to_json(const HostPortCounts& counts) {
  json out = json::array();
  for (const auto& [key, n] : counts) out.push_back(json::array({key.first, key.second, n}));
  return out;
}

std::optional<HostPortCounts> host_port_counts_from(const json& m) {
  const auto it = m.find("connected");
  if (it == m.end() || !it->is_array()) return std::nullopt;
  HostPortCounts out;
  for (const auto& entry : *it) {
    if (!entry.is_array() || entry.size() != 3 || !entry[0].is_string()) return std::nullopt;
    const auto port = bounded(entry[1], 65535);
    const auto n = bounded(entry[2], UINT64_MAX);
    if (!port || !n) return std::nullopt;
    const auto key = std::make_pair(entry[0].get<std::string>(), static_cast<std::uint16_t>(*port));
    if (!out.emplace(key, *n).second) return std::nullopt;
  }
  return out;
}

PortCounts counts_for_host(const HostPortCounts& counts, const std::string& host) {
  PortCounts out;
  for (const auto& [key, n] : counts) {
    if (key.first == host) out[key.second] += n;
  }
  return out;
}

}  // namespace volley::control
