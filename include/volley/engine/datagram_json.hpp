#pragma once
// UDP datagram counters as JSON: the same object on the control wire and in the result document.
#include <nlohmann/json.hpp>

#include "volley/results/slot_stats.hpp"

namespace volley::engine {

nlohmann::json datagrams_to_json(const results::DatagramCounters& d);
/// Missing keys read as 0.
results::DatagramCounters datagrams_from_json(const nlohmann::json& j);

}  // namespace volley::engine
