#pragma once
/// \file
/// A JSON record of the OS settings that change network benchmark results (kernel, CPU governors,
/// net sysctls, NIC queues and IRQ affinity, qdiscs), and a diff of two such records, so runs under
/// different tunings can be compared ("what changed between these two hosts / these two runs").
///
/// Snapshot layout (every leaf may be null when its source could not be read; each such source is
/// also named, by the same dotted key, in the sorted "missing" array; nothing is guessed):
/// {
///   "schema_version": 1,
///   "kernel": {"osrelease": str, "ostype": str, "version": str},
///   "hostname": str,
///   "cpu": {"model": str, "count": int, "online": str,
///           "governor": {"cpu0": str, ...}, "cur_freq_khz": {"cpu0": int, ...}},
///   "memory": {"total_kb": int},
///   "sysctl": {"net.core.rmem_max": str, ..., "net.ipv4.tcp_rmem": str, ...},
///   "interfaces": {"eth0": {"mtu": int, "tx_queue_len": int, "operstate": str,
///                           "speed_mbps": int, "rx_queues": int, "tx_queues": int,
///                           "rps_cpus": {"rx-0": str, ...}, "xps_cpus": {"tx-0": str, ...},
///                           "irqs": {"45": "<smp_affinity_list>", ...},
///                           "qdisc": str (null when tc lists none for it)}, ...},
///   "missing": ["cpu.governor", "interfaces.lo.speed_mbps", "qdisc", ...]
/// }
/// sysctl values are the file's text with whitespace runs collapsed to one space.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace volley::sampling {

/// Runs argv (argv[0] searched in PATH, no shell) and returns its standard output; nullopt when
/// it cannot start or does not exit with status 0.
using CommandRunner = std::function<std::optional<std::string>(const std::vector<std::string>&)>;

/// The real CommandRunner: posix_spawnp, stdin and stderr on /dev/null, output capped at 16 MiB.
/// Thread: any (blocks until the child exits).
[[nodiscard]] std::optional<std::string> run_command(const std::vector<std::string>& argv);

/// Snapshot of the host under `root`. Runs `tc qdisc show` with run_command only when `root` is
/// "/" (a fake tree has no qdiscs); otherwise "qdisc" is recorded as missing. Never throws on
/// missing or unreadable files. Thread: any.
[[nodiscard]] nlohmann::json read_system_snapshot(const std::filesystem::path& root = "/");

/// As above, with the qdisc command runner injected (tests). `run` may be empty: qdisc missing.
[[nodiscard]] nlohmann::json read_system_snapshot(const std::filesystem::path& root,
                                                  const CommandRunner& run);

/// One leaf that differs between two snapshots. Thread: any (value type).
struct SnapshotDifference {
  std::string key;                       ///< Dotted path, e.g. "sysctl.net.core.rmem_max".
  std::optional<nlohmann::json> before;  ///< nullopt when the key is absent from the first.
  std::optional<nlohmann::json> after;   ///< nullopt when the key is absent from the second.

  /// "sysctl.net.core.rmem_max: 212992 -> 4194304" (strings unquoted, absent as "(absent)").
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const SnapshotDifference&, const SnapshotDifference&) = default;
};

/// Every leaf (non-object value, or empty object) whose value differs, or that exists on one side
/// only, sorted by key. Object keys are joined with '.'; arrays are compared as whole leaves.
/// Thread: any.
[[nodiscard]] std::vector<SnapshotDifference> diff_snapshots(const nlohmann::json& a,
                                                             const nlohmann::json& b);

}  // namespace volley::sampling
