#pragma once
// What a process reads from its child processes' messages, and what a master's child reads from
// its parent's `start` (docs/architecture.md, "Processes"). Pure functions apart from ChildSet's
// coroutines, so the fuzz target of these messages links them alone. A child is this binary, but
// its bytes are still a peer's: a malformed message is ignored or refused here, never thrown on.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/engine/engine.hpp"

namespace volley::control {

/// The ports of a `loaded` message (requested -> bound), ignoring what is not a port.
std::map<std::uint16_t, std::uint16_t> ports_from_json(const nlohmann::json& ports);
/// A list of ports, one per process of the peer (`start.master_ports`, `loaded.shard_ports["0"]`);
/// empty if absent or not all ports.
std::vector<std::uint16_t> shard_ports_from_json(const nlohmann::json& ports);
/// A `loaded` message's negotiated listeners, one per process of the peer
/// (`shard_ports["0"]`); empty when it lists none or not all ports.
std::vector<std::uint16_t> loaded_listeners(const nlohmann::json& loaded);
/// One side's negotiated ports, process by process, as the one list its peer spreads strands over:
/// entry j belongs to process j % processes, so strand s (sent to entry s % size) reaches process
/// s % processes, the one that runs it. Each process contributes as many listeners as the one
/// with the fewest.
std::vector<std::uint16_t> spread_ports(const std::vector<std::vector<std::uint16_t>>& per_process);
/// `start.targets` for a master's child process: remotehost -> address and ports.
nlohmann::json targets_to_json(const std::map<std::string, engine::HostTarget>& targets);
std::map<std::string, engine::HostTarget> targets_from_json(const nlohmann::json& targets);
/// The children's `drained` messages for `step` as one: the listed shortfalls (at most five) and
/// their total.
nlohmann::json merge_drained(std::size_t step, const std::vector<nlohmann::json>& drained);

}  // namespace volley::control
