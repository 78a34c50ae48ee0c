#pragma once
/// \file
/// The figures a sweep reports and a comparison judges, read from run result documents
/// (report::to_json_document, documented in docs/results.md), and their summary across repeats.
/// Pure functions over JSON. Thread: any.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace volley::analysis {

/// One figure of a run.
enum class Metric : std::size_t {
  kTransactionsPerS,  ///< totals.transactions_per_s
  kP50Ns,             ///< latency p50 of the timed transaction
  kP99Ns,
  kP99_9Ns,
  kCpuBusyPctLocal,      ///< cpu.local.total.busy_pct (the host, not the process)
  kCpuBusyPctRemote,     ///< mean over cpu.remote[].total.busy_pct
  kServiceDemandLocal,   ///< cpu.local.service_demand.process_us_per_transaction
  kServiceDemandRemote,  ///< mean over the slaves' process_us_per_transaction
  kErrors,               ///< totals.errors.total
};
inline constexpr std::size_t kMetricCount = 9;

/// Which way a metric's change is an improvement. Host CPU busy is judged neither way: it
/// follows the work done (fewer transactions use less CPU), so whether a change made the work
/// cheaper is the per-transaction figure's to say (service demand).
enum class Better : std::uint8_t { kHigher, kLower, kNotJudged };

/// What a metric is called in documents and tables, and which way is better.
struct MetricInfo {
  std::string_view key;    ///< Summary key, e.g. "p99_ns".
  std::string_view label;  ///< Table label, e.g. "p99 latency".
  Better better = Better::kLower;
};
[[nodiscard]] const MetricInfo& info(Metric m);

/// Fewer counted runs than this at a point: a t-test sees only large changes, and a 95%
/// confidence interval is wide (12.7 standard errors with two runs), so tables say so.
inline constexpr std::size_t kRepeatsToJudge = 3;

/// One run's figures; nullopt where the document has none (e.g. no CPU sample).
struct RunMetrics {
  std::array<std::optional<double>, kMetricCount> values{};
  [[nodiscard]] const std::optional<double>& operator[](Metric m) const {
    return values[static_cast<std::size_t>(m)];
  }
  std::optional<double>& operator[](Metric m) { return values[static_cast<std::size_t>(m)]; }
};

/// Reads a run document. The timed transaction is the first transaction of the first group whose
/// step is in "timed_steps". Missing or non-numeric fields give nullopt; never throws.
[[nodiscard]] RunMetrics run_metrics(const nlohmann::json& run);

/// Whether a run counts in summaries and comparisons: its "status" is "ok".
[[nodiscard]] bool counts(const nlohmann::json& run);

/// The values of `m` over the counted runs that have it.
[[nodiscard]] std::vector<double> metric_values(const std::vector<RunMetrics>& runs, Metric m);

/// Summary of one sweep point (counted runs only).
struct PointSummary {
  std::size_t n = 0;        ///< Counted runs.
  double tps_mean = 0;      ///< NaN when n == 0.
  double tps_stddev = 0;    ///< NaN when n < 2.
  double tps_ci95_low = 0;  ///< NaN when n < 2.
  double tps_ci95_high = 0;
  /// Mean over the runs that have it, per metric (index by Metric); nullopt when none has it.
  std::array<std::optional<double>, kMetricCount> means{};
  [[nodiscard]] const std::optional<double>& mean(Metric m) const {
    return means[static_cast<std::size_t>(m)];
  }
};

/// Summarizes the run documents of one point (those that do not count are skipped).
[[nodiscard]] PointSummary summarize_runs(const std::vector<nlohmann::json>& runs);

/// The "summary" object of a sweep point: {transactions_per_s: {mean, stddev, ci95_low,
/// ci95_high, n}, p50_ns, p99_ns, p99_9_ns, cpu_busy_pct_local, cpu_busy_pct_remote,
/// service_demand_us_per_txn_local, service_demand_us_per_txn_remote, errors}; NaN and missing
/// are null.
[[nodiscard]] nlohmann::json to_json(const PointSummary& summary);

}  // namespace volley::analysis
