// Fuzz target: what a process reads from its child processes (the `loaded` message's ports and
// negotiated listeners, the `drained` messages merged into one) and what a master's child reads
// from its parent's `start` (the targets: remotehost -> address and ports). The input is one JSON
// text given to every reader; an array is also taken as the children's messages, one per element.
// Invariants checked: ports read are ports; targets written back read back the same; the merged
// drained lists at most five shortfalls; spreading listeners takes as many from each process.
#include <cstdlib>
#include <vector>

#include "fuzz_input.hpp"
#include "volley/control/child_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace volley;
  using nlohmann::json;
  const json m = json::parse(reinterpret_cast<const char*>(data),
                             reinterpret_cast<const char*>(data) + size, nullptr,
                             /*allow_exceptions=*/false);
  if (m.is_discarded()) return 0;
  (void)control::ports_from_json(m);
  (void)control::shard_ports_from_json(m);
  (void)control::loaded_listeners(m);
  const auto targets = control::targets_from_json(m);
  const auto again = control::targets_from_json(control::targets_to_json(targets));
  if (again.size() != targets.size()) std::abort();
  for (const auto& [host, t] : targets) {
    const auto it = again.find(host);
    if (it == again.end() || it->second.address != t.address ||
        it->second.negotiated_port != t.negotiated_port ||
        it->second.shard_ports != t.shard_ports) {
      std::abort();
    }
  }
  if (m.is_array()) {
    const std::vector<json> children(m.begin(), m.end());
    const json merged = control::merge_drained(4, children);
    if (merged.at("short").size() > 5) std::abort();
    std::vector<std::vector<std::uint16_t>> per_process;
    for (const json& child : children) per_process.push_back(control::loaded_listeners(child));
    const auto spread = control::spread_ports(per_process);
    if (!per_process.empty() && spread.size() % per_process.size() != 0) std::abort();
  }
  return 0;
}
