#pragma once
/// \file
/// Per-interface NIC counters from <root>/proc/net/dev, sampled twice and turned into per-second
/// rates with nic_rates() (uperf's netstat.c approach).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json_fwd.hpp>

namespace volley::sampling {

/// Cumulative counters of one interface (the first four receive and transmit columns).
/// Thread: any (value type).
struct NicCounters {
  std::uint64_t rx_bytes = 0;
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_errors = 0;
  std::uint64_t rx_drops = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_errors = 0;
  std::uint64_t tx_drops = 0;
  friend bool operator==(const NicCounters&, const NicCounters&) = default;
};

/// Counters by interface name, sorted by name.
using NicCounterMap = std::map<std::string, NicCounters, std::less<>>;

/// One NIC sample. Thread: any (value type).
struct NicSample {
  std::chrono::steady_clock::time_point taken{};  ///< When the sample was taken.
  std::optional<NicCounterMap> interfaces;        ///< nullopt when /proc/net/dev is unreadable.
};

/// Parses /proc/net/dev text ("name: rx_bytes rx_packets rx_errs rx_drop ... tx_bytes tx_packets
/// tx_errs tx_drop ..."). Header lines and malformed lines are skipped; nullopt only when the
/// text has no interface line at all. Thread: any.
[[nodiscard]] std::optional<NicCounterMap> parse_proc_net_dev(std::string_view text);

/// Reads <root>/proc/net/dev, stamped with steady_clock::now(); never throws. Thread: any.
[[nodiscard]] NicSample sample_nics(const std::filesystem::path& root = "/");

/// Per-second rates of one interface over an interval. Thread: any (value type).
struct NicRate {
  double rx_bytes_per_s = 0;
  double tx_bytes_per_s = 0;
  double rx_bits_per_s = 0;  ///< 8 * rx_bytes_per_s.
  double tx_bits_per_s = 0;  ///< 8 * tx_bytes_per_s.
  double rx_packets_per_s = 0;
  double tx_packets_per_s = 0;
  double rx_errors_per_s = 0;
  double tx_errors_per_s = 0;
  double rx_drops_per_s = 0;
  double tx_drops_per_s = 0;
};

/// Rates between two samples. Thread: any (value type).
struct NicRates {
  double wall_s = 0;                                       ///< after.taken - before.taken, seconds.
  std::map<std::string, NicRate, std::less<>> interfaces;  ///< Interfaces present in both.
};

/// Rates `(after - before) / wall_s`. Counters that went backwards (interface reset, 32-bit wrap
/// on old drivers) count as 0; interfaces in only one sample are left out; all rates are 0 when
/// no time elapsed. Thread: any.
[[nodiscard]] NicRates nic_rates(const NicSample& before, const NicSample& after);

/// JSON keys: {"rx_bytes_per_s", "tx_bytes_per_s", "rx_bits_per_s", "tx_bits_per_s",
/// "rx_packets_per_s", "tx_packets_per_s", "rx_errors_per_s", "tx_errors_per_s",
/// "rx_drops_per_s", "tx_drops_per_s"}.
void to_json(nlohmann::json& j, const NicRate& r);
/// JSON keys: {"wall_s", "interfaces": {"<name>": rate, ...}}.
void to_json(nlohmann::json& j, const NicRates& r);

/// Source of NIC samples, so the engine can run against a fake in tests. Thread: the caller's.
class NicSampler {
 public:
  virtual ~NicSampler() = default;
  /// Takes one sample now; never throws.
  virtual NicSample sample() = 0;
};

/// NicSampler over <root>/proc/net/dev. Thread: any; stateless apart from the root.
class ProcNetDevSampler final : public NicSampler {
 public:
  explicit ProcNetDevSampler(std::filesystem::path root = "/") : root_(std::move(root)) {}
  NicSample sample() override { return sample_nics(root_); }

 private:
  std::filesystem::path root_;
};

}  // namespace volley::sampling
