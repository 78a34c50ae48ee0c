#pragma once
/// \file
/// The text table `volley sweep` prints: a row per value with transactions/s (mean and 95% CI
/// half-width across repeats), p50/p99/p99.9 of the timed transaction, CPU busy % and service
/// demand on each side, errors. Pure formatting. Thread: any.

#include <string>
#include <vector>

#include "volley/analysis/run_metrics.hpp"
#include "volley/analysis/sweep_document.hpp"

namespace volley::analysis {

/// One figure for a table: transactions/s as "12.3k", latency as "27.1us", CPU % as "45.2",
/// service demand as "12.34", errors as a whole number; NaN as "n/a".
[[nodiscard]] std::string format_metric(Metric m, double value);

/// The sweep table, header included, one row per point (in the order given).
[[nodiscard]] std::string format_sweep_table(const std::string& vary_name,
                                             const std::vector<SweepPoint>& points);

}  // namespace volley::analysis
