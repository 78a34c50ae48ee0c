#pragma once
/// \file
/// The kernel's own account of the network stack: protocol counters from <root>/proc/net/snmp
/// and <root>/proc/net/netstat (retransmits, listen queue overflows, UDP buffer errors, ...) and
/// the per-CPU packet counters of <root>/proc/net/softnet_stat, sampled twice and turned into
/// deltas with kernel_counter_deltas(). They say why a result is what it is (drops, timeouts,
/// overflows) where the CPU and NIC figures only say how busy the host was.
///
/// /proc/net/* belongs to the reader's network namespace: in a namespace (a multi-host test with
/// veth pairs) these are that namespace's counters, not the host's. softnet_stat is per CPU and
/// the same in every namespace.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace volley::sampling {

/// Cumulative protocol counters by "<Group>.<Name>", the group as the file's line prefix without
/// its colon: "Tcp.RetransSegs", "TcpExt.ListenOverflows", "Udp.RcvbufErrors".
using ProtocolCounterMap = std::map<std::string, std::uint64_t, std::less<>>;

/// Either the parsed value or why the text is malformed (which line, what was wrong).
template <class T>
using ParseResult = std::variant<T, std::string>;

/// Parses the header/value line pairs of /proc/net/snmp or /proc/net/netstat ("Tcp: A B C" then
/// "Tcp: 1 2 3") generically by name. Negative values (Tcp MaxConn -1) are settings, not
/// counters, and are left out. An error when a value line does not follow its header, names and
/// values differ in number, or a value is not an integer. Thread: any.
[[nodiscard]] ParseResult<ProtocolCounterMap> parse_snmp_pairs(std::string_view text);

/// One CPU's line of /proc/net/softnet_stat (hex columns; the kernel keeps them as 32 bits).
struct SoftnetCpu {
  unsigned cpu = 0;                ///< column 13 where the kernel prints it, else the line index
  std::uint32_t processed = 0;     ///< column 1: packets taken from the backlog / NAPI
  std::uint32_t dropped = 0;       ///< column 2: dropped for a full input backlog
  std::uint32_t time_squeeze = 0;  ///< column 3: NET_RX ran out of budget or time with work left
  friend bool operator==(const SoftnetCpu&, const SoftnetCpu&) = default;
};

/// Parses /proc/net/softnet_stat. An error when a line has fewer than three columns or a column
/// is not hexadecimal, or when there is no line at all. Thread: any.
[[nodiscard]] ParseResult<std::vector<SoftnetCpu>> parse_softnet_stat(std::string_view text);

/// One sample of the kernel counters. A source that could not be read or parsed is left out
/// (its counters are then absent) and named in `problems`. Thread: any (value type).
struct KernelSample {
  std::chrono::steady_clock::time_point taken{};
  ProtocolCounterMap protocol;  ///< snmp and netstat together
  std::optional<std::vector<SoftnetCpu>> softnet;
  std::vector<std::string> problems;  ///< "proc/net/netstat: unreadable", ...
};

/// Reads <root>/proc/net/snmp, netstat and softnet_stat, stamped with steady_clock::now().
/// Never throws. Thread: any.
[[nodiscard]] KernelSample sample_kernel_counters(const std::filesystem::path& root = "/");

/// The protocol counters reported, in report order.
[[nodiscard]] std::span<const std::string_view> watched_protocol_counters();

/// One CPU's softnet counters over an interval (modulo 2^32: the kernel's are 32 bits wide).
struct SoftnetDelta {
  unsigned cpu = 0;
  std::uint64_t processed = 0;
  std::uint64_t dropped = 0;
  std::uint64_t time_squeeze = 0;
  friend bool operator==(const SoftnetDelta&, const SoftnetDelta&) = default;
};

/// Kernel counters over an interval. Thread: any (value type).
struct KernelCounterDeltas {
  double wall_s = 0;  ///< after.taken - before.taken, seconds (>= 0)
  /// Each watched counter present in both samples that did not go backwards: after - before.
  ProtocolCounterMap counters;
  /// Watched counters missing from either sample (not in this kernel, or its file unreadable).
  std::vector<std::string> absent;
  /// Watched counters lower at the end than at the start (reset, or a 32-bit wrap): no delta.
  std::vector<std::string> went_backwards;
  /// CPUs present in both samples, sorted; nullopt when either sample lacks softnet_stat.
  std::optional<std::vector<SoftnetDelta>> softnet;
  std::vector<std::string> problems;  ///< both samples' problems, without repeats
  friend bool operator==(const KernelCounterDeltas&, const KernelCounterDeltas&) = default;
};

/// Deltas `after - before` of the watched counters and of softnet_stat. Never throws.
/// Thread: any.
[[nodiscard]] KernelCounterDeltas kernel_counter_deltas(const KernelSample& before,
                                                        const KernelSample& after);

/// The softnet deltas added up over the CPUs (cpu is 0). Thread: any.
[[nodiscard]] SoftnetDelta softnet_total(const std::vector<SoftnetDelta>& per_cpu);

/// JSON keys: {"wall_s", "counters": {"Tcp.RetransSegs": n, ...}, "absent": [names],
/// "went_backwards": [names], "softnet": {"processed", "dropped", "time_squeeze", "per_cpu":
/// [{"cpu", "processed", "dropped", "time_squeeze"}]}|null, "problems": [text]}.
void to_json(nlohmann::json& j, const KernelCounterDeltas& d);

/// The watched counters and softnet_stat's totals ("softnet.processed", "softnet.dropped",
/// "softnet.time_squeeze") that moved over `d`, by name: what an interval keeps of a host's kernel
/// counters (a few entries, so a long run's series stays small). Thread: any.
[[nodiscard]] ProtocolCounterMap moved_counters(const KernelCounterDeltas& d);

/// A host's kernel counters interval by interval: each next() is what moved since the previous
/// one (the first, since construction). Thread: the caller's.
class KernelCounterSeries {
 public:
  explicit KernelCounterSeries(std::filesystem::path root = "/")
      : root_(std::move(root)), last_(sample_kernel_counters(root_)) {}
  [[nodiscard]] ProtocolCounterMap next() {
    KernelSample now = sample_kernel_counters(root_);
    const KernelCounterDeltas d = kernel_counter_deltas(last_, now);
    last_ = std::move(now);
    return moved_counters(d);
  }

 private:
  std::filesystem::path root_;
  KernelSample last_;
};

/// The kernel counters of one timed part: start() when its first step is released, finish() when
/// its last one ends (or the run is stopped in it). finish() without start(), or a second
/// finish(), does nothing. Thread: the caller's (the control thread).
class KernelCounterWindow {
 public:
  explicit KernelCounterWindow(std::filesystem::path root = "/") : root_(std::move(root)) {}
  void start() { before_ = sample_kernel_counters(root_); }
  void finish() {
    if (before_ && !deltas_)
      deltas_ = kernel_counter_deltas(*before_, sample_kernel_counters(root_));
  }
  [[nodiscard]] bool started() const { return before_.has_value(); }
  [[nodiscard]] const std::optional<KernelCounterDeltas>& deltas() const { return deltas_; }

 private:
  std::filesystem::path root_;
  std::optional<KernelSample> before_;
  std::optional<KernelCounterDeltas> deltas_;
};

}  // namespace volley::sampling
