#pragma once
// The connections the master established, on the wire (docs/control-protocol.md, "The end of a
// step"): its `end_step` tells each slave how many TCP data connections its strands have
// established to each of that slave's data ports since the run began, so the slave ends a step
// as soon as its listeners have taken that many, and waits (and then fails) only when some are
// missing. A master's child process reports its own counts, per slave and port, with its
// `step_done`. Nothing a peer sends is trusted: a malformed list is refused.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace volley::control {

/// Data port -> connections established to it (cumulative over the run).
using PortCounts = std::map<std::uint16_t, std::uint64_t>;
/// (slave host, data port) -> connections established (a master's engine and children).
using HostPortCounts = std::map<std::pair<std::string, std::uint16_t>, std::uint64_t>;

/// `[[port, connections], ...]` in port order.
nlohmann::json port_counts_to_json(const PortCounts& counts);
/// The `connected` field of `message`; nullopt when it is missing or malformed (not an array of
/// [port, count] pairs of unsigned numbers, a port above 65535, or a port listed twice).
std::optional<PortCounts> port_counts_from(const nlohmann::json& message);

/// `[[host, port, connections], ...]`.
nlohmann::json host_port_counts_to_json(const HostPortCounts& counts);
/// The `connected` field of a child's `step_done`; nullopt when it is missing or malformed.
std::optional<HostPortCounts> host_port_counts_from(const nlohmann::json& message);

/// The counts toward `host`, per port.
PortCounts counts_for_host(const HostPortCounts& counts, const std::string& host);

}  // namespace volley::control
