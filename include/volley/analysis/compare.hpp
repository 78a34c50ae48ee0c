#pragma once
/// \file
/// `volley compare BASE NEW`: per point value present in both series and per metric, the change
/// and whether it is significant (Welch's t-test across repeats at p < 0.05), a verdict, and the
/// differences between the two system snapshots. Pure logic. Thread: any.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/analysis/run_metrics.hpp"
#include "volley/analysis/sweep_document.hpp"
#include "volley/sampling/system_snapshot.hpp"

namespace volley::analysis {

/// Significance threshold of the t-test.
inline constexpr double kSignificanceLevel = 0.05;

/// The metrics a comparison judges, in table order.
inline constexpr std::array<Metric, 7> kComparedMetrics{Metric::kTransactionsPerS,
                                                        Metric::kP99Ns,
                                                        Metric::kP50Ns,
                                                        Metric::kServiceDemandLocal,
                                                        Metric::kServiceDemandRemote,
                                                        Metric::kCpuBusyPctLocal,
                                                        Metric::kCpuBusyPctRemote};

/// kChanged: a significant change of a metric that is judged neither way (Better::kNotJudged).
enum class Verdict { kBetter, kWorse, kChanged, kNoSignificantChange, kUnknown };
[[nodiscard]] std::string_view to_string(Verdict v);  ///< "better", "worse", ...

/// One metric at one point.
struct MetricComparison {
  Metric metric = Metric::kTransactionsPerS;
  std::size_t base_n = 0;
  std::size_t new_n = 0;
  double base_mean = 0;
  double new_mean = 0;
  std::optional<double> change_pct;  ///< nullopt when the base mean is 0
  std::optional<double> p_value;     ///< nullopt when either side has fewer than 2 values
  bool significant = false;          ///< p_value < kSignificanceLevel
  bool paired = false;               ///< judged by the paired t-test (an interleaved comparison)
  Verdict verdict = Verdict::kUnknown;
};

/// Judges two samples of one metric (both non-empty). With fewer than 2 values on a side the
/// verdict is kUnknown whatever the change.
[[nodiscard]] MetricComparison compare_metric(Metric m, const std::vector<double>& base,
                                              const std::vector<double>& next);
/// The same for paired samples (base[i] and next[i] from one round; sizes equal), judged by the
/// paired t-test.
[[nodiscard]] MetricComparison compare_paired_metric(Metric m, const std::vector<double>& base,
                                                     const std::vector<double>& next);

/// Every compared metric (that both sides have) at one point value.
struct PointComparison {
  nlohmann::json value;
  std::vector<MetricComparison> metrics;
};

struct Comparison {
  std::string vary_name;
  std::vector<PointComparison> points;       ///< values present in both, in base order
  std::vector<nlohmann::json> only_in_base;  ///< values measured in BASE only
  std::vector<nlohmann::json> only_in_new;
  /// The fewest counted runs on either side of any compared point (0 when none compared).
  std::size_t fewest_repeats = 0;
  bool base_has_snapshot = false;
  bool new_has_snapshot = false;
  /// Differences of the master hosts' snapshots, leaving out current CPU frequencies (they
  /// change all the time and are not a setting).
  std::vector<sampling::SnapshotDifference> snapshot_differences;
};

/// Matches points by value (numbers compare by value) and compares them.
[[nodiscard]] Comparison compare_series(const Series& base, const Series& next);

/// An interleaved comparison's rounds: run i of `base` and run i of `next` ran side by side (one
/// round), so each metric is judged by the paired t-test over the rounds in which both runs
/// counted and have it. The result has one point (value null). Snapshots: `base_snapshot` and
/// `next_snapshot`, each taken after its side's setting was applied.
[[nodiscard]] Comparison compare_rounds(const SweepPoint& base, const SweepPoint& next,
                                        const nlohmann::json& base_snapshot,
                                        const nlohmann::json& next_snapshot);

/// Whether some metric got significantly worse by more than `pct` percent (for --fail-if-worse).
[[nodiscard]] bool worse_beyond(const Comparison& c, double pct);

/// The comparison as JSON: {"points": [{"value", "metrics": [{"metric" (the summary key),
/// "base_n", "new_n", "base_mean", "new_mean", "change_pct", "p_value", "significant", "paired",
/// "verdict"}]}], "fewest_repeats", "only_in_base", "only_in_new", "snapshot_differences":
/// [{"key", "base", "new"}]}; absent numbers are null.
[[nodiscard]] nlohmann::json to_json(const Comparison& c);

/// The comparison as text: one block per point with a row per metric, then the snapshot
/// differences ("key: old -> new", "no differences", or "no snapshot in BASE/NEW").
[[nodiscard]] std::string format_comparison(const Comparison& c);

}  // namespace volley::analysis
