#include "volley/control/child_wire.hpp"

#include <algorithm>
#include <charconv>

#include "volley/control/message.hpp"

namespace volley::control {

namespace asio = boost::asio;
using nlohmann::json;

std::map<std::uint16_t, std::uint16_t> ports_from_json(const json& announced) {
  std::map<std::uint16_t, std::uint16_t> ports;
  if (!announced.is_object()) return ports;
  for (const auto& [k, v] : announced.items()) {
    unsigned requested = 0;
    const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), requested);
    if (ec != std::errc{} || end != k.data() + k.size() || requested > 65535 ||
        !v.is_number_unsigned() || v.get<std::uint64_t>() > 65535) {
      continue;  // not a port: ignore it rather than trust it
    }
    ports[static_cast<std::uint16_t>(requested)] = v.get<std::uint16_t>();
  }
  return ports;
}

std::vector<std::uint16_t> shard_ports_from_json(const json& ports) {
  std::vector<std::uint16_t> out;
  if (!ports.is_array()) return out;
  for (const auto& p : ports) {
    if (!p.is_number_integer() || p.get<std::int64_t>() < 0 || p.get<std::int64_t>() > 65535)
      return {};
    out.push_back(p.get<std::uint16_t>());
  }
  return out;
}

std::vector<std::uint16_t> spread_ports(
    const std::vector<std::vector<std::uint16_t>>& per_process) {
  std::size_t listeners = SIZE_MAX;
  for (const auto& p : per_process) listeners = std::min(listeners, p.size());
  std::vector<std::uint16_t> out;
  if (per_process.empty() || listeners == 0) return out;
  for (std::size_t l = 0; l < listeners; ++l) {
    for (const auto& p : per_process) out.push_back(p[l]);
  }
  return out;
}

json targets_to_json(const std::map<std::string, engine::HostTarget>& targets) {
  json out = json::object();
  for (const auto& [host, t] : targets) {
    out[host] = {{"address", t.address.to_string()},
                 {"port", t.negotiated_port},
                 {"ports", t.shard_ports},
                 {"peer", t.peer}};
  }
  return out;
}

std::vector<std::uint16_t> loaded_listeners(const json& loaded) {
  // find(), not value(): value() throws on a message or a shard_ports that is not an object.
  if (!loaded.is_object()) return {};
  const auto shards = loaded.find("shard_ports");
  if (shards == loaded.end() || !shards->is_object()) return {};
  const auto first = shards->find("0");
  return first == shards->end() ? std::vector<std::uint16_t>{} : shard_ports_from_json(*first);
}

std::map<std::string, engine::HostTarget> targets_from_json(const json& targets) {
  std::map<std::string, engine::HostTarget> out;
  if (!targets.is_object()) return out;
  for (const auto& [host, t] : targets.items()) {
    // A target that is not an object, or whose address or port is not one, is left out: the
    // strands of that host then fail their connects ("no slave serves remotehost").
    if (!t.is_object()) continue;
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(text_field(t, "address"), ec);
    const auto port = t.contains("port") ? uint_field(t, "port") : std::optional<std::uint64_t>(0);
    if (ec || !port || *port > 65535) continue;
    const auto ports = t.find("ports");
    const auto peer = t.contains("peer") ? uint_field(t, "peer") : std::optional<std::uint64_t>(0);
    if (!peer || *peer > UINT32_MAX) continue;
    out[host] = engine::HostTarget{
        address, static_cast<std::uint16_t>(*port),
        ports == t.end() ? std::vector<std::uint16_t>{} : shard_ports_from_json(*ports),
        static_cast<std::uint32_t>(*peer)};
  }
  return out;
}

json merge_drained(std::size_t step, const std::vector<json>& drained) {
  json listed = json::array();
  std::uint64_t total = 0;
  for (const json& d : drained) {
    // A child's counts are added as far as they are numbers (saturating), its list as far as it
    // is a list: value() would throw on either, and the sum could wrap.
    const std::uint64_t more = uint_field(d, "short_total").value_or(0);
    total = more > UINT64_MAX - total ? UINT64_MAX : total + more;
    if (!d.is_object()) continue;
    const auto list = d.find("short");
    if (list == d.end() || !list->is_array()) continue;
    for (const auto& entry : *list) {
      if (listed.size() < 5) listed.push_back(entry);
    }
  }
  return message("drained", {{"step", step}, {"short", std::move(listed)}, {"short_total", total}});
}

}  // namespace volley::control
