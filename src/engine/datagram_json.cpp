#include "volley/engine/datagram_json.hpp"

namespace volley::engine {

nlohmann::json datagrams_to_json(const results::DatagramCounters& d) {
  return nlohmann::json{{"sent", d.sent},
                        {"received", d.received},
                        {"lost", d.net_lost()},
                        {"gaps", d.lost},
                        {"late", d.late},
                        {"duplicates", d.duplicates},
                        {"timeouts", d.timeouts},
                        {"jitter_ns", d.jitter_ns}};
}

results::DatagramCounters datagrams_from_json(const nlohmann::json& j) {
  const auto get = [&j](const char* key) { return j.value(key, std::uint64_t{0}); };
  results::DatagramCounters d;
  d.sent = get("sent");
  d.received = get("received");
  d.lost = get("gaps");
  d.late = get("late");
  d.duplicates = get("duplicates");
  d.timeouts = get("timeouts");
  d.jitter_ns = get("jitter_ns");
  return d;
}

}  // namespace volley::engine
