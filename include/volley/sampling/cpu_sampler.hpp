#pragma once
/// \file
/// CPU time of the host (<root>/proc/stat, in USER_HZ ticks, "jiffies") and of this process
/// (getrusage(RUSAGE_SELF)), sampled twice and turned into percentages with cpu_usage().
/// Sources and caveats are documented in docs/statistics.md.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace volley::sampling {

/// Cumulative ticks per state for one "cpu" line of /proc/stat (guest time is already included in
/// user and nice by the kernel, so it is not read separately). Thread: any (value type).
struct CpuTimes {
  std::uint64_t user = 0;
  std::uint64_t nice = 0;
  std::uint64_t system = 0;
  std::uint64_t idle = 0;
  std::uint64_t iowait = 0;
  std::uint64_t irq = 0;
  std::uint64_t softirq = 0;
  std::uint64_t steal = 0;

  /// Sum of the eight states, ticks.
  [[nodiscard]] std::uint64_t total() const;
  friend bool operator==(const CpuTimes&, const CpuTimes&) = default;
};

/// One "cpuN" line. Offline CPUs have no line, so indices can have gaps. Thread: any.
struct PerCpuTimes {
  unsigned cpu = 0;  ///< N of "cpuN".
  CpuTimes times;
  friend bool operator==(const PerCpuTimes&, const PerCpuTimes&) = default;
};

/// Parsed /proc/stat: the aggregate "cpu" line and every "cpuN" line, sorted by N.
/// Thread: any (value type).
struct ProcStat {
  CpuTimes total;
  std::vector<PerCpuTimes> per_cpu;
  friend bool operator==(const ProcStat&, const ProcStat&) = default;
};

/// This process's CPU time so far (getrusage(RUSAGE_SELF): all threads). Thread: any.
struct ProcessCpuTimes {
  std::chrono::microseconds user{0};
  std::chrono::microseconds system{0};
  friend bool operator==(const ProcessCpuTimes&, const ProcessCpuTimes&) = default;
};

/// One CPU sample. A source that could not be read is nullopt, never zeros. Thread: any.
struct CpuSample {
  std::chrono::steady_clock::time_point taken{};  ///< When the sample was taken.
  std::optional<ProcStat> host;                   ///< nullopt when /proc/stat is unreadable.
  std::optional<ProcessCpuTimes> process;         ///< nullopt when getrusage failed.
};

/// Parses /proc/stat text. nullopt when there is no aggregate "cpu" line with at least the four
/// classic fields (user nice system idle); missing later fields (old kernels) read as 0, and
/// malformed "cpuN" lines are skipped. Thread: any.
[[nodiscard]] std::optional<ProcStat> parse_proc_stat(std::string_view text);

/// getrusage(RUSAGE_SELF); nullopt if it fails. Thread: any.
[[nodiscard]] std::optional<ProcessCpuTimes> read_process_cpu();

/// Reads <root>/proc/stat and this process's rusage, stamped with steady_clock::now().
/// Never throws on a missing or malformed file (the field is nullopt). Thread: any.
[[nodiscard]] CpuSample sample_cpu(const std::filesystem::path& root = "/");

/// Share of the elapsed ticks per state, in percent (0..100). usr = user + nice; busy = 100 -
/// idle - iowait (so it includes steal, as most tools do). All zero when no ticks elapsed.
/// Thread: any (value type).
struct CpuBreakdown {
  double usr_pct = 0;
  double sys_pct = 0;
  double irq_pct = 0;
  double softirq_pct = 0;
  double iowait_pct = 0;
  double steal_pct = 0;
  double idle_pct = 0;
  double busy_pct = 0;
};

/// Breakdown for one CPU present in both samples. Thread: any.
struct CoreUsage {
  unsigned cpu = 0;
  CpuBreakdown usage;
};

/// The busiest CPU over the interval. Thread: any.
struct HottestCore {
  unsigned cpu = 0;
  double busy_pct = 0;
};

/// This process's CPU over the interval. Thread: any.
struct ProcessUsage {
  double user_s = 0;    ///< User CPU seconds.
  double sys_s = 0;     ///< System CPU seconds.
  double core_pct = 0;  ///< (user_s + sys_s) / wall_s * 100: 250 means 2.5 cores busy.
  double cores = 0;     ///< (user_s + sys_s) / wall_s.
};

/// CPU usage between two samples. Thread: any (value type).
struct CpuUsage {
  double wall_s = 0;                    ///< after.taken - before.taken, seconds (>= 0).
  std::optional<CpuBreakdown> total;    ///< nullopt when either sample lacks /proc/stat.
  std::vector<CoreUsage> per_cpu;       ///< CPUs present in both samples, sorted by index.
  std::optional<HottestCore> hottest;   ///< Highest busy_pct (lowest index on ties).
  std::optional<ProcessUsage> process;  ///< nullopt when either sample lacks rusage.
};

/// Differences `after - before`. Counters that went backwards count as 0 ticks; CPUs present in
/// only one sample are left out; never throws. Thread: any.
[[nodiscard]] CpuUsage cpu_usage(const CpuSample& before, const CpuSample& after);

/// Breakdown of the ticks elapsed between two readings of one CPU line. Thread: any.
[[nodiscard]] CpuBreakdown cpu_breakdown(const CpuTimes& before, const CpuTimes& after);

/// JSON keys: {"usr_pct", "sys_pct", "irq_pct", "softirq_pct", "iowait_pct", "steal_pct",
/// "idle_pct", "busy_pct"} (numbers, percent).
void to_json(nlohmann::json& j, const CpuBreakdown& b);
/// JSON keys: {"wall_s", "total": breakdown|null, "per_cpu": [{"cpu": N, ...breakdown}],
/// "hottest_cpu": {"cpu", "busy_pct"}|null, "process": {"user_s", "sys_s", "core_pct",
/// "cores"}|null}.
void to_json(nlohmann::json& j, const CpuUsage& u);

/// Source of CPU samples, so the engine can run against a fake in tests. Thread: the caller's
/// (the control thread).
class CpuSampler {
 public:
  virtual ~CpuSampler() = default;
  /// Takes one sample now; never throws.
  virtual CpuSample sample() = 0;
};

/// CpuSampler over <root>/proc/stat and getrusage. Thread: any; stateless apart from the root.
class ProcCpuSampler final : public CpuSampler {
 public:
  explicit ProcCpuSampler(std::filesystem::path root = "/") : root_(std::move(root)) {}
  CpuSample sample() override { return sample_cpu(root_); }

 private:
  std::filesystem::path root_;
};

}  // namespace volley::sampling
