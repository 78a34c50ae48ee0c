#pragma once
/// \file
/// The latency histograms of a run as text others can re-analyse (--latency-log), schema 2: CSV
/// rows
///   interval,side,host,group,transaction,flowop,bucket_lower_ns,bucket_upper_ns,count
/// after a few '#' comment lines describing them. `interval` is the 0-based index of an interval
/// of the master's time series (the same index as the JSON `intervals[]` and the CSV's rows, in
/// the order they were taken) for the master's histograms of that interval, written as the
/// interval ends and not kept in memory; or `all` for the merged whole-run histograms of the
/// master and of each slave, written at the end. `flowop` is empty for a transaction's own
/// (per-iteration) histogram, "uncorrected" for a paced transaction's latency measured from the
/// actual rather than the intended start, and "<index>:<type>" (0-based index in the
/// transaction, e.g. "1:read") for a flowop.

#include <iosfwd>
#include <string_view>
#include <vector>

#include "volley/results/slot_stats.hpp"
#include "volley/report/run_report.hpp"

namespace volley::report {

/// The column header row (after the comments), without the line end.
inline constexpr std::string_view kLatencyLogHeader =
    "interval,side,host,group,transaction,flowop,bucket_lower_ns,bucket_upper_ns,count";

/// The comments and the header row. Thread: any.
void write_latency_log_header(std::ostream& out);
/// The master's rows of interval `index`: one per non-empty bucket of every slot in `slots`
/// (indexed like `report.slot_names`). Thread: any.
void write_interval_histograms(const RunReport& report, std::size_t index,
                               const std::vector<results::SlotStats>& slots, std::ostream& out);
/// The `all` rows: the merged histograms of the master and of each slave that reported.
void write_run_histograms(const RunReport& report, std::ostream& out);
/// Header and `all` rows (a latency log without interval rows), "\n" line ends.
void write_latency_log(const RunReport& report, std::ostream& out);

}  // namespace volley::report
