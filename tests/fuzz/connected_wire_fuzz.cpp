// Fuzz target: the data connections a peer says it established, per port (a slave reads them
// from the master's `end_step`) and per host and port (a parent reads them from its master-side
// children's `step_done`). The input is the message's JSON text.
// Invariants checked: accepted counts written back parse back to the same counts; a host's share
// per port is its own count.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "volley/control/connected_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace volley::control;
  using nlohmann::json;
  const json m = json::parse(reinterpret_cast<const char*>(data),
                             reinterpret_cast<const char*>(data) + size, nullptr,
                             /*allow_exceptions=*/false);
  if (m.is_discarded()) return 0;
  if (const auto counts = port_counts_from(m)) {
    if (port_counts_from(json{{"connected", port_counts_to_json(*counts)}}) != counts) std::abort();
  }
  if (const auto counts = host_port_counts_from(m)) {
    if (host_port_counts_from(json{{"connected", host_port_counts_to_json(*counts)}}) != counts) {
      std::abort();
    }
    for (const auto& [key, n] : *counts) {
      const PortCounts mine = counts_for_host(*counts, key.first);
      if (mine.count(key.second) == 0 || mine.at(key.second) != n) std::abort();
    }
  }
  return 0;
}
