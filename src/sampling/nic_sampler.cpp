#include "volley/sampling/nic_sampler.hpp"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/sampling/text_file.hpp"

namespace volley::sampling {
namespace {

// Receive columns 0..3 are bytes packets errs drop; transmit columns 8..11 likewise.
constexpr std::size_t kColumns = 16;
constexpr std::size_t kTxFirst = 8;

double per_second(std::uint64_t before, std::uint64_t after, double wall_s) {
  if (wall_s <= 0 || after <= before) return 0.0;
  return static_cast<double>(after - before) / wall_s;
}

}  // namespace

std::optional<NicCounterMap> parse_proc_net_dev(std::string_view text) {
  NicCounterMap out;
  for (const auto line : split_lines(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto name = trim(line.substr(0, colon));
    if (name.empty() || name.find('|') != std::string_view::npos) continue;
    const auto fields = split_fields(line.substr(colon + 1));
    if (fields.size() < kColumns) continue;
    std::uint64_t v[kColumns] = {};
    bool ok = true;
    for (std::size_t i = 0; i < kColumns && ok; ++i) {
      const auto parsed = parse_u64(fields[i]);
      ok = parsed.has_value();
      if (ok) v[i] = *parsed;
    }
    if (!ok) continue;
    out.insert_or_assign(std::string(name),
                         NicCounters{v[0], v[1], v[2], v[3], v[kTxFirst], v[kTxFirst + 1],
                                     v[kTxFirst + 2], v[kTxFirst + 3]});
  }
  if (out.empty()) return std::nullopt;
  return out;
}

NicSample sample_nics(const std::filesystem::path& root) {
  NicSample sample;
  if (const auto text = read_text_file(root / "proc/net/dev")) {
    sample.interfaces = parse_proc_net_dev(*text);
  }
  sample.taken = std::chrono::steady_clock::now();
  return sample;
}

NicRates nic_rates(const NicSample& before, const NicSample& after) {
  NicRates rates;
  rates.wall_s = std::max(0.0, std::chrono::duration<double>(after.taken - before.taken).count());
  if (!before.interfaces || !after.interfaces) return rates;
  const double s = rates.wall_s;
  for (const auto& [name, now] : *after.interfaces) {
    const auto it = before.interfaces->find(name);
    if (it == before.interfaces->end()) continue;
    const NicCounters& old = it->second;
    NicRate r;
    r.rx_bytes_per_s = per_second(old.rx_bytes, now.rx_bytes, s);
    r.tx_bytes_per_s = per_second(old.tx_bytes, now.tx_bytes, s);
    r.rx_bits_per_s = 8.0 * r.rx_bytes_per_s;
    r.tx_bits_per_s = 8.0 * r.tx_bytes_per_s;
    r.rx_packets_per_s = per_second(old.rx_packets, now.rx_packets, s);
    r.tx_packets_per_s = per_second(old.tx_packets, now.tx_packets, s);
    r.rx_errors_per_s = per_second(old.rx_errors, now.rx_errors, s);
    r.tx_errors_per_s = per_second(old.tx_errors, now.tx_errors, s);
    r.rx_drops_per_s = per_second(old.rx_drops, now.rx_drops, s);
    r.tx_drops_per_s = per_second(old.tx_drops, now.tx_drops, s);
    rates.interfaces.emplace(name, r);
  }
  return rates;
}

void to_json(nlohmann::json& j, const NicRate& r) {
  j = nlohmann::json{
      {"rx_bytes_per_s", r.rx_bytes_per_s},     {"tx_bytes_per_s", r.tx_bytes_per_s},
      {"rx_bits_per_s", r.rx_bits_per_s},       {"tx_bits_per_s", r.tx_bits_per_s},
      {"rx_packets_per_s", r.rx_packets_per_s}, {"tx_packets_per_s", r.tx_packets_per_s},
      {"rx_errors_per_s", r.rx_errors_per_s},   {"tx_errors_per_s", r.tx_errors_per_s},
      {"rx_drops_per_s", r.rx_drops_per_s},     {"tx_drops_per_s", r.tx_drops_per_s}};
}

void to_json(nlohmann::json& j, const NicRates& r) {
  nlohmann::json interfaces = nlohmann::json::object();
  for (const auto& [name, rate] : r.interfaces) interfaces[name] = rate;
  j = nlohmann::json{{"wall_s", r.wall_s}, {"interfaces", std::move(interfaces)}};
}

}  // namespace volley::sampling
